package dev.continuum.router.kv.backend;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The backend KV cache index (docs/kv-routing.md, "The backend KV cache index"): for each backend with a
 * {@code dynamo.kv_cache_index} source, the block hashes its KV-event stream says it holds. One writer per
 * backend (its source's stream), any number of readers; reads take no lock.
 *
 * <p>Beside each backend's set, an inverted view answers selection in one walk of the prompt whatever the number of
 * backends: each tracked backend has a slot (at most {@link #MAX_SLOTS}), and each block hash maps to the slots of
 * the backends holding it, as an immutable bit set replaced atomically per hash ({@link #prefixDepths}).
 */
public final class BackendKvIndex {
    /** Backends tracked at once (the sources' bound); one more is kept but has no slot, so selection sees 0. */
    public static final int MAX_SLOTS = 256;
    private static final int WORDS = MAX_SLOTS / 64;

    private final Map<String, Set<Long>> blocks = new ConcurrentHashMap<>();
    /** Tokens per block of each backend's latest stored event ({@code transport: zmq} sources only). */
    private final Map<String, Integer> blockSizes = new ConcurrentHashMap<>();
    private final Map<String, Integer> slots = new ConcurrentHashMap<>();
    /** Slots in use; guarded by {@code slots}' monitor (writers only). */
    private final boolean[] used = new boolean[MAX_SLOTS];
    /** Block hash to the slots of the backends holding it (never an empty set: the entry goes instead). */
    private final Map<Long, long[]> holders = new ConcurrentHashMap<>();

    /**
     * How many of {@code blockHashes}, from the first on, {@code backend} holds: the length of the prompt prefix
     * whose KV it could reuse. 0 for a backend the index does not track.
     */
    public int overlap(String backend, long[] blockHashes) {
        Set<Long> held = blocks.get(backend);
        if (held == null) {
            return 0;
        }
        int n = 0;
        while (n < blockHashes.length && held.contains(blockHashes[n])) {
            n++;
        }
        return n;
    }

    /** The backend's slot in {@link #prefixDepths}' answer, or -1 when it holds nothing (or has none). */
    public int slot(String backend) {
        Integer s = slots.get(backend);
        return s == null ? -1 : s;
    }

    /**
     * Writes into {@code depths} (at least {@link #MAX_SLOTS} long), for every slot in use, how many leading blocks
     * of {@code prompt} its backend holds: {@link #overlap} for all backends at once, in one lookup per block of the
     * longest held prefix. Slots not in use get meaningless values. The hashes come boxed (once per request, off
     * the event loop) so that the walk, once per pick, allocates nothing.
     */
    public void prefixDepths(Long[] prompt, int[] depths) {
        long a0 = -1L;
        long a1 = -1L;
        long a2 = -1L;
        long a3 = -1L;
        int k = 0;
        for (; k < prompt.length; k++) {
            long[] held = holders.get(prompt[k]);
            if (held == null) {
                break;
            }
            a0 = drop(a0, held[0], 0, k, depths);
            a1 = drop(a1, held[1], 64, k, depths);
            a2 = drop(a2, held[2], 128, k, depths);
            a3 = drop(a3, held[3], 192, k, depths);
            if ((a0 | a1 | a2 | a3) == 0) {
                return;
            }
        }
        drop(a0, 0, 0, k, depths);
        drop(a1, 0, 64, k, depths);
        drop(a2, 0, 128, k, depths);
        drop(a3, 0, 192, k, depths);
    }

    /** Slots alive before block {@code k} but not holding it stop at depth {@code k}; returns those still alive. */
    private static long drop(long alive, long held, int base, int k, int[] depths) {
        long gone = alive & ~held;
        while (gone != 0) {
            depths[base + Long.numberOfTrailingZeros(gone)] = k;
            gone &= gone - 1;
        }
        return alive & held;
    }

    /** {@code hashes} boxed, for {@link #prefixDepths}. */
    public static Long[] keys(long[] hashes) {
        Long[] keys = new Long[hashes.length];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = hashes[i];
        }
        return keys;
    }

    /** Blocks held by {@code backend}. */
    public int size(String backend) {
        Set<Long> held = blocks.get(backend);
        return held == null ? 0 : held.size();
    }

    /** Blocks held across backends. */
    public long size() {
        long n = 0;
        for (Set<Long> held : blocks.values()) {
            n += held.size();
        }
        return n;
    }

    /** Adds blocks unless that would pass {@code max}; false (nothing added) when it would. */
    public boolean store(String backend, long[] hashes, int max) {
        Set<Long> held = blocks.computeIfAbsent(backend, b -> ConcurrentHashMap.newKeySet());
        int fresh = 0;
        for (long h : hashes) {
            if (!held.contains(h)) {
                fresh++;
            }
        }
        if (held.size() + fresh > max) {
            return false;
        }
        int slot = slotFor(backend);
        for (long h : hashes) {
            if (held.add(h) && slot >= 0) {
                holders.compute(h, (k, m) -> with(m, slot));
            }
        }
        return true;
    }

    public void remove(String backend, long[] hashes) {
        Set<Long> held = blocks.get(backend);
        if (held != null) {
            int slot = slot(backend);
            for (long h : hashes) {
                if (held.remove(h) && slot >= 0) {
                    holders.computeIfPresent(h, (k, m) -> without(m, slot));
                }
            }
        }
    }

    /** The backend's cache was cleared, or its source stopped: it holds nothing the router knows of. */
    public void clear(String backend) {
        Set<Long> held = blocks.remove(backend);
        blockSizes.remove(backend);
        synchronized (slots) {
            Integer slot = slots.remove(backend);
            if (slot != null) {
                if (held != null) {
                    for (Long h : held) {
                        holders.computeIfPresent(h, (k, m) -> without(m, slot));
                    }
                }
                used[slot] = false;
            }
        }
    }

    /** Records the tokens per block the backend's engine reports (its stored events' {@code block_size}). */
    public void blockSize(String backend, int size) {
        blockSizes.put(backend, size);
    }

    /** The backend's engine block size, or 0 when no stored event said (an SSE source, or none yet). */
    public int blockSize(String backend) {
        Integer size = blockSizes.get(backend);
        return size == null ? 0 : size;
    }

    /** Whether the index tracks {@code backend} (it has a source that stored something since its last clear). */
    public boolean tracks(String backend) {
        return blocks.containsKey(backend);
    }

    private int slotFor(String backend) {
        Integer s = slots.get(backend);
        if (s != null) {
            return s;
        }
        synchronized (slots) {
            s = slots.get(backend);
            if (s != null) {
                return s;
            }
            for (int i = 0; i < MAX_SLOTS; i++) {
                if (!used[i]) {
                    used[i] = true;
                    slots.put(backend, i);
                    return i;
                }
            }
            return -1;
        }
    }

    private static long[] with(long @Nullable [] mask, int slot) {
        long[] m = mask == null ? new long[WORDS] : mask.clone();
        m[slot >>> 6] |= 1L << slot;
        return m;
    }

    private static long @Nullable [] without(long[] mask, int slot) {
        if ((mask[slot >>> 6] & (1L << slot)) == 0) {
            return mask;
        }
        long[] m = mask.clone();
        m[slot >>> 6] &= ~(1L << slot);
        for (long w : m) {
            if (w != 0) {
                return m;
            }
        }
        return null; // nobody holds it: the entry goes
    }
}
