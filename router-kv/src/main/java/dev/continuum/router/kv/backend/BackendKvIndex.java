package dev.continuum.router.kv.backend;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The backend KV cache index (docs/kv-routing.md, "The backend KV cache index"): for each backend with a
 * {@code dynamo.kv_cache_index} source, the block hashes its KV-event stream says it holds. One writer per
 * backend (its source's stream), any number of readers; reads take no lock.
 */
public final class BackendKvIndex {
    private final Map<String, Set<Long>> blocks = new ConcurrentHashMap<>();
    /** Tokens per block of each backend's latest stored event ({@code transport: zmq} sources only). */
    private final Map<String, Integer> blockSizes = new ConcurrentHashMap<>();

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
        for (long h : hashes) {
            held.add(h);
        }
        return true;
    }

    public void remove(String backend, long[] hashes) {
        Set<Long> held = blocks.get(backend);
        if (held != null) {
            for (long h : hashes) {
                held.remove(h);
            }
        }
    }

    /** The backend's cache was cleared, or its source stopped: it holds nothing the router knows of. */
    public void clear(String backend) {
        blocks.remove(backend);
        blockSizes.remove(backend);
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
}
