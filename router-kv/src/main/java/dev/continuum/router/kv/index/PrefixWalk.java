package dev.continuum.router.kv.index;

import static dev.continuum.router.kv.index.ChildTable.SLOT;

import dev.continuum.router.shim.OverlapScores;

/**
 * One reader thread's lookup in a {@link RadixIndex}: the two walks from the root along a request's block hashes,
 * and the scratch arrays they reuse (made once per thread and index, so a lookup allocates nothing).
 *
 * <p>A walk reads the writer's arrays with no lock, so what it reads may be torn by a write in progress: it reads
 * each array reference once, range-checks every id and length it reads, and throws {@link #TORN} on an impossible
 * one. The caller keeps an answer only if its optimistic stamp still validates, so a torn walk is thrown away.
 */
final class PrefixWalk {
    /** Thrown by a walk that read an impossible id in a race; preallocated, the race is expected. */
    private static final IllegalStateException TORN = new IllegalStateException("torn read during a write");

    private final ChildTable children;
    private final NodeStore nodes;
    private final RankRegistry ranks;
    private final long rootPath;
    private final int[] candidates;
    private final int[] next;
    private final int[] droppedRank;
    private final int[] droppedDepth;
    private final long[] droppedBits = new long[RadixIndex.RANK_BITS];

    PrefixWalk(ChildTable children, NodeStore nodes, RankRegistry ranks, long rootPath, int maxOwners) {
        this.children = children;
        this.nodes = nodes;
        this.ranks = ranks;
        this.rootPath = rootPath;
        candidates = new int[maxOwners];
        next = new int[maxOwners];
        droppedRank = new int[maxOwners];
        droppedDepth = new int[Math.max(maxOwners, RadixIndex.RANK_BITS)];
    }

    /**
     * Each rank's longest contiguous prefix of {@code keys}, deepest first, into {@code out} (cleared by the
     * caller); false when what it read cannot be a whole state (a race). Candidates are a bit set of rank ids,
     * intersected at each step with the child slot's owner summary; a node with an owner id past the bits hands
     * the walk to {@link #mergeWalk}.
     */
    boolean walk(long[] keys, OverlapScores out) {
        // Read every array reference once: the writer may replace them while growing.
        long[] table = children.slots();
        long[] workers = ranks.workers();
        int[] dps = ranks.dpRanks();
        int mask = table.length / SLOT - 1;
        int bound = Math.min(nodes.ownerCounts().length, nodes.ownerLists().length);
        long[] dropBits = droppedBits;
        int[] dropDepth = droppedDepth;
        long cand = 0;
        int dropped = 0;
        int node = NodeStore.ROOT;
        long path = rootPath;
        int depth = 0;
        for (; depth < keys.length; depth++) {
            path = ChildTable.step(path, keys[depth]);
            int at = childAt(table, mask, path, node, bound);
            if (at < 0) {
                break;
            }
            int child = (int) table[SLOT * at + 1];
            long bits = table[SLOT * at + 2];
            if (bits < 0) { // OVERFLOW: an owner id past the bits
                return mergeWalk(keys, out);
            }
            if (bits == 0) {
                break;
            }
            if (depth == 0) {
                cand = bits;
            } else {
                long lost = cand & ~bits;
                if (lost != 0) {
                    if (dropped == dropBits.length) {
                        throw TORN; // each drop loses a rank: more than RANK_BITS drops is a torn read
                    }
                    dropBits[dropped] = lost;
                    dropDepth[dropped++] = depth;
                    cand &= bits;
                    if (cand == 0) {
                        break;
                    }
                }
            }
            node = child;
        }
        // Deepest first: the survivors (ascending id), then each drop from the last to the first (descending
        // id within one), the order the merge walk emits.
        int rankBound = Math.min(workers.length, dps.length);
        for (long c = cand; c != 0; c &= c - 1) {
            if (!emit(out, Long.numberOfTrailingZeros(c), depth, workers, dps, rankBound)) {
                return true;
            }
        }
        for (int k = dropped - 1; k >= 0; k--) {
            for (long c = dropBits[k]; c != 0; c &= ~Long.highestOneBit(c)) {
                if (!emit(out, 63 - Long.numberOfLeadingZeros(c), dropDepth[k], workers, dps, rankBound)) {
                    return true;
                }
            }
        }
        return true;
    }

    /** The walk for paths holding rank ids past the bits: a sorted merge of the owner arrays at each step. */
    private boolean mergeWalk(long[] keys, OverlapScores out) {
        out.clear();
        int[] counts = nodes.ownerCounts();
        long[][] lists = nodes.ownerLists();
        long[] table = children.slots();
        long[] workers = ranks.workers();
        int[] dps = ranks.dpRanks();
        int mask = table.length / SLOT - 1;
        int bound = Math.min(counts.length, lists.length);
        int[] cand = candidates;
        int[] kept = next;
        int n = 0;
        int dropped = 0;
        int node = NodeStore.ROOT;
        long path = rootPath;
        int depth = 0;
        for (; depth < keys.length; depth++) {
            path = ChildTable.step(path, keys[depth]);
            int at = childAt(table, mask, path, node, bound);
            if (at < 0) {
                break;
            }
            int child = (int) table[SLOT * at + 1];
            long[] list = lists[child];
            int owners = list == null ? 0 : Math.min(counts[child], Math.min(list.length, cand.length));
            if (owners <= 0) {
                break;
            }
            if (depth == 0) {
                for (int j = 0; j < owners; j++) {
                    cand[j] = (int) (list[j] >>> 32);
                }
                n = owners;
            } else {
                // Sorted merge: candidates missing from this node stop at this depth.
                int survivors = 0;
                int j = 0;
                for (int k = 0; k < n; k++) {
                    int rank = cand[k];
                    while (j < owners && (int) (list[j] >>> 32) < rank) {
                        j++;
                    }
                    if (j < owners && (int) (list[j] >>> 32) == rank) {
                        kept[survivors++] = rank;
                    } else if (dropped < droppedRank.length) {
                        droppedRank[dropped] = rank;
                        droppedDepth[dropped++] = depth;
                    }
                }
                System.arraycopy(kept, 0, cand, 0, survivors);
                n = survivors;
                if (survivors == 0) {
                    break;
                }
            }
            node = child;
        }
        // Deepest first: the survivors, then the dropped ranks from the last to stop to the first.
        int rankBound = Math.min(workers.length, dps.length);
        for (int k = 0; k < n; k++) {
            if (!emit(out, cand[k], depth, workers, dps, rankBound)) {
                return true;
            }
        }
        for (int k = dropped - 1; k >= 0; k--) {
            if (!emit(out, droppedRank[k], droppedDepth[k], workers, dps, rankBound)) {
                return true;
            }
        }
        return true;
    }

    /**
     * The step both walks share: the slot of {@code node}'s child at {@code path}, or -1 when the request's prefix
     * ends here; throws {@link #TORN} for a child id no whole state holds ({@code bound} is the node arrays'
     * length as the walk read them).
     */
    private static int childAt(long[] table, int mask, long path, int node, int bound) {
        int at = ChildTable.probe(table, mask, path, node);
        if (at >= 0) {
            int child = (int) table[SLOT * at + 1];
            if (child <= 0 || child >= bound) {
                throw TORN; // only in a race: the stamp will not validate
            }
        }
        return at;
    }

    private static boolean emit(OverlapScores out, int rank, int depth, long[] workers, int[] dps, int bound) {
        if (rank < 0 || rank >= bound) {
            throw TORN; // only in a race: the stamp will not validate
        }
        return out.add(workers[rank], dps[rank], depth);
    }
}
