package dev.continuum.router.kv.index;

/**
 * The index's compiled-in ceilings (docs/kv-routing.md): past any of them a block, a rank or a message is
 * refused and counted {@code over_capacity}; nothing grows without bound on fleet-authored events.
 *
 * @param maxNodes           radix nodes (distinct token-block prefixes), the root not counted
 * @param maxBlocksPerRank   engine block hashes one (worker, dp_rank) may hold
 * @param maxOwnerships      (rank, block) pairs over all ranks
 * @param maxOwnersPerNode   ranks holding one node
 * @param maxRanksPerSource  (worker, dp_rank) cursors one subscription may create
 * @param maxRanks           (worker, dp_rank) ranks over all subscriptions: each costs a map, a cursor and a
 *                           gauge even when empty, and cards (fleet-authored) may declare thousands of ranks
 */
public record IndexLimits(int maxNodes, int maxBlocksPerRank, int maxOwnerships, int maxOwnersPerNode,
                          int maxRanksPerSource, int maxRanks) {
    public static final IndexLimits DEFAULT = new IndexLimits(1 << 20, 1 << 18, 1 << 23, 4096, 4096, 16_384);

    public IndexLimits {
        if (maxNodes < 1 || maxNodes > (1 << 28) || maxBlocksPerRank < 1 || maxOwnerships < 1
                || maxOwnersPerNode < 1 || maxOwnersPerNode > (1 << 16) || maxRanksPerSource < 1 || maxRanks < 1) {
            throw new IllegalArgumentException("index limits out of range: " + maxNodes + ", " + maxBlocksPerRank
                    + ", " + maxOwnerships + ", " + maxOwnersPerNode + ", " + maxRanksPerSource + ", " + maxRanks);
        }
    }
}
