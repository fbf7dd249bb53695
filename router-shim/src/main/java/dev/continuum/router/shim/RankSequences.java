package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Objects;

/**
 * The active sequences of one (worker, dp_rank): what the router dispatched there and has not seen finish
 * ({@link ActiveSequences} has the rules). The counters a pick reads are kept in the rank's {@link RankLedger}
 * (one object per candidate to read, not two); picking threads add and subtract the raw parts atomically, and
 * the deduplicated part and the block reference counts behind it are written only by the sequence drainer.
 */
final class RankSequences {
    final SampleKey key;
    /** Where the rank's counters live. */
    final RankLedger counters;
    /** Set by the drainer while the rank is outside the newest candidate index (its worker left). */
    volatile boolean departed;
    /** The drainer's reference counts of the block hashes admitted here. */
    final BlockRefCounts refs = new BlockRefCounts();
    /** Where peer replicas' shares of this rank are added (the same counters). */
    final PeerCounters peers;

    RankSequences(SampleKey key, RankLedger counters) {
        this.key = Objects.requireNonNull(key, "key");
        this.counters = Objects.requireNonNull(counters, "counters");
        this.peers = new PeerCounters(counters);
    }

    long prefillTokens() {
        return counters.activePrefillTokens();
    }

    long blocks() {
        return counters.activeBlocks();
    }

    int sequences() {
        return counters.activeSequences();
    }

    void addTokens(long delta) {
        counters.addActiveTokens(delta);
    }

    void addRaw(long delta) {
        counters.addActiveRaw(delta);
    }

    void addOpen(int delta) {
        counters.addActiveOpen(delta);
    }

    /** Drainer only. */
    void addShared(long delta) {
        counters.addActiveShared(delta);
    }
}
