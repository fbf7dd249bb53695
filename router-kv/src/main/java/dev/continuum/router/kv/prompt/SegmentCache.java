package dev.continuum.router.kv.prompt;

import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Token IDs of prompt segments (the text between two added tokens), keyed by a 128-bit SHA-256 prefix of the
 * tokenizer's identity and the segment's text, shared by every request of every loaded model and bounded in
 * bytes (IDs plus a fixed per-entry overhead), least recently used first out.
 *
 * <p>No lock: a hit is a map read and a stamp; an insert reserves its bytes with one atomic add. When a reserve
 * crosses the bound, one inserting thread at a time evicts in a batch, the least recently stamped entries until
 * the cache is at three quarters of its bound (a scan and a sort per batch, amortised over the quarter of the
 * bound that fills before the next); an insert that still does not fit is not cached. So the bytes held never
 * exceed the bound, whatever the traffic.
 */
final class SegmentCache {
    /** Bytes charged per entry besides its IDs: key, entry, map node and array headers. */
    static final int ENTRY_OVERHEAD = 112;

    /** A segment's 128-bit key. */
    record Key(long hi, long lo) {
    }

    private static final class Entry {
        final Key key;
        final int[] ids;
        final long bytes;
        volatile long stamp;

        Entry(Key key, int[] ids, long stamp) {
            this.key = key;
            this.ids = ids;
            this.bytes = 4L * ids.length + ENTRY_OVERHEAD;
            this.stamp = stamp;
        }
    }

    /** Where the cache reports (metrics). */
    interface Listener {
        void evicted(long entries);

        Listener NONE = n -> { };
    }

    private final ConcurrentHashMap<Key, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong clock = new AtomicLong();
    private final AtomicBoolean evicting = new AtomicBoolean();
    private final Listener listener;
    private volatile long maxBytes;

    SegmentCache(long maxBytes, Listener listener) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes " + maxBytes);
        }
        this.maxBytes = maxBytes;
        this.listener = listener;
    }

    /** Whether anything may be cached (a bound of 0 turns the cache off). */
    boolean enabled() {
        return maxBytes > 0;
    }

    long maxBytes() {
        return maxBytes;
    }

    /** Bytes held now (never above {@link #maxBytes()} once a shrink has evicted). */
    long bytes() {
        return bytes.get();
    }

    int size() {
        return entries.size();
    }

    /** A new bound (a reload); shrinking evicts at once, 0 empties the cache. */
    void resize(long newMaxBytes) {
        if (newMaxBytes < 0) {
            throw new IllegalArgumentException("maxBytes " + newMaxBytes);
        }
        maxBytes = newMaxBytes;
        if (bytes.get() > newMaxBytes) {
            evict(newMaxBytes);
        }
    }

    /** The IDs cached for {@code key} (shared: the caller copies them, never writes them), or null. */
    int @Nullable [] get(Key key) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        e.stamp = clock.incrementAndGet();
        return e.ids;
    }

    /** Caches {@code ids} (owned by the cache from now on) unless they do not fit; true when cached. */
    boolean put(Key key, int[] ids) {
        long max = maxBytes;
        Entry e = new Entry(key, ids, clock.incrementAndGet());
        if (e.bytes > max / 4) {
            return false; // one entry may not flush a quarter of the cache
        }
        if (bytes.addAndGet(e.bytes) > max) {
            evict(max - max / 4);
            if (bytes.get() > max) {
                bytes.addAndGet(-e.bytes);
                return false;
            }
        }
        if (entries.putIfAbsent(key, e) != null) {
            bytes.addAndGet(-e.bytes);
            return false;
        }
        return true;
    }

    /** Evicts least recently used entries until at most {@code target} bytes are held; one thread at a time. */
    private void evict(long target) {
        if (!evicting.compareAndSet(false, true)) {
            return;
        }
        try {
            long excess = bytes.get() - target;
            if (excess <= 0) {
                return;
            }
            Entry[] all = entries.values().toArray(new Entry[0]);
            long[] stamps = new long[all.length];
            for (int i = 0; i < all.length; i++) {
                stamps[i] = all[i].stamp;
            }
            // indexes oldest first, by the stamps read once (a stamp may move while this runs)
            Integer[] order = new Integer[all.length];
            for (int i = 0; i < order.length; i++) {
                order[i] = i;
            }
            Arrays.sort(order, Comparator.comparingLong(i -> stamps[i]));
            long freed = 0;
            int cut = 0;
            while (cut < order.length && freed < excess) {
                freed += all[order[cut++]].bytes;
            }
            long threshold = cut == 0 ? Long.MIN_VALUE : stamps[order[cut - 1]];
            long removed = 0;
            for (int i = 0; i < all.length; i++) {
                Entry e = all[i];
                if (stamps[i] <= threshold && entries.remove(e.key, e)) {
                    bytes.addAndGet(-e.bytes);
                    removed++;
                }
            }
            if (removed > 0) {
                listener.evicted(removed);
            }
        } finally {
            evicting.set(false);
        }
    }
}
