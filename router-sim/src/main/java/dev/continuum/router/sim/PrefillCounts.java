package dev.continuum.router.sim;

import java.util.HashMap;
import java.util.Map;

/**
 * How many times each KV block was prefilled across the fleet (a block served uncached by a worker rank counts
 * once per such prefill), keyed by its sequence hash: the measure of a prefix spread over the fleet and computed
 * several times. At most {@value #MAX_BLOCKS} distinct blocks are counted; later new blocks are not (counted in
 * {@link #uncounted()}).
 */
public final class PrefillCounts {
    static final int MAX_BLOCKS = 1 << 20;

    private final Map<Long, Integer> counts = new HashMap<>();
    private long uncounted;
    private int max;

    /** Blocks {@code from..seqHashes.length-1} of a prompt were prefilled by one rank. */
    synchronized void prefilled(long[] seqHashes, int from) {
        for (int i = Math.max(0, from); i < seqHashes.length; i++) {
            Integer c = counts.get(seqHashes[i]);
            if (c == null && counts.size() >= MAX_BLOCKS) {
                uncounted++;
                continue;
            }
            int next = c == null ? 1 : c + 1;
            counts.put(seqHashes[i], next);
            max = Math.max(max, next);
        }
    }

    /** Times the block with this sequence hash was prefilled (0: never, or not counted). */
    public synchronized int count(long seqHash) {
        return counts.getOrDefault(seqHash, 0);
    }

    /** The most times any one block was prefilled. */
    public synchronized int max() {
        return max;
    }

    /** Prefills of blocks past the bound, not counted. */
    public synchronized long uncounted() {
        return uncounted;
    }
}
