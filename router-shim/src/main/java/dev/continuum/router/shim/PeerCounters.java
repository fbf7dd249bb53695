package dev.continuum.router.shim;

import java.util.Objects;

/**
 * The seam through which another router replica's share of one rank's active sequences reaches the picker
 * (docs/replicas.md): the same counters the rank's own sequences add to, so a pick reads own and peers' backlog
 * with the loads it makes anyway, without a lock or a lookup. Peer blocks count one per block (not deduplicated
 * against this router's own). Whoever adds must remember what it added to which object and take exactly that back:
 * when a rank's ledger is replaced (the rank left and came back) {@link ActiveSequences#peerCounters} returns a new
 * object, and the old one's counts leave with it.
 */
public final class PeerCounters {
    private final RankSequences rank;

    PeerCounters(RankSequences rank) {
        this.rank = Objects.requireNonNull(rank, "rank");
    }

    /** Adds (or, negative, takes back) uncached prefill tokens, blocks and sequences; atomic, never blocks. */
    public void add(long prefillTokens, long blocks, int sequences) {
        if (prefillTokens != 0) {
            rank.addTokens(prefillTokens);
        }
        if (blocks != 0) {
            rank.addRaw(blocks);
        }
        if (sequences != 0) {
            rank.addOpen(sequences);
        }
    }
}
