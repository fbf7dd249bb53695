package dev.continuum.router.sim;

import java.util.Iterator;
import java.util.LinkedHashMap;

/**
 * One data-parallel rank's prefix cache: KV blocks keyed by their sequence hash (so a block stands for its whole
 * prefix from the root), least recently used evicted past {@code capacity} blocks.
 *
 * <p>A served prompt touches its blocks from the last to the first, so a block is always at least as recent as
 * every block after it in any chain: eviction takes chain tails first and a cached block's parent is always
 * cached. The cached prefix of a prompt is therefore the run of its leading blocks found here.
 *
 * <p>Not thread-safe: its {@link WorkerKv} serialises every call.
 */
final class PrefixCache {
    /**
     * What serving one prompt did.
     *
     * @param cached  leading blocks that were cached already
     * @param stored  blocks {@code cached..stored-1} are new (a prompt longer than the cache stores its first
     *                {@code capacity} blocks only)
     * @param evicted sequence hashes evicted to make room, least recently used first
     */
    record Admission(int cached, int stored, long[] evicted) {
    }

    private static final long[] NONE = new long[0];

    private final long capacity;
    private final LinkedHashMap<Long, Boolean> lru = new LinkedHashMap<>(1024, 0.75f, true);

    PrefixCache(long capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 1 block)");
        }
        this.capacity = capacity;
    }

    /** Leading blocks of {@code blocks} cached here, without touching them (the harness's oracle asks this). */
    int cachedPrefix(TokenBlocks blocks) {
        long[] seq = blocks.seqHashes();
        int n = 0;
        while (n < seq.length && lru.containsKey(seq[n])) {
            n++;
        }
        return n;
    }

    /** Serves a prompt: counts its cached prefix, stores the rest (up to capacity) and evicts what no longer fits. */
    Admission admit(TokenBlocks blocks) {
        int cached = cachedPrefix(blocks);
        int keep = (int) Math.min(blocks.size(), capacity);
        long[] seq = blocks.seqHashes();
        for (int i = keep - 1; i >= 0; i--) {
            lru.put(seq[i], Boolean.TRUE); // an access: moves a cached block to the most recent end
        }
        long[] evicted = NONE;
        int over = (int) Math.max(0, lru.size() - capacity);
        if (over > 0) {
            evicted = new long[over];
            Iterator<Long> oldest = lru.keySet().iterator();
            for (int i = 0; i < over; i++) {
                evicted[i] = oldest.next();
                oldest.remove();
            }
        }
        return new Admission(cached, keep, evicted);
    }

    /** Drops every block; true when there was any. */
    boolean clear() {
        boolean any = !lru.isEmpty();
        lru.clear();
        return any;
    }

    int size() {
        return lru.size();
    }

    boolean contains(long seqHash) {
        return lru.containsKey(seqHash);
    }
}
