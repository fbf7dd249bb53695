package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The active sequences of one (worker, dp_rank): what the router dispatched there and has not seen finish
 * ({@link ActiveSequences} has the rules). The counters a pick reads are kept in the rank's {@link RankLedger}
 * (one object per candidate to read, not two); picking threads add and subtract the raw parts atomically, and
 * the deduplicated part and the block reference counts behind it are written only by the sequence drainer.
 */
final class RankSequences {
    private static final VarHandle OPEN;

    static {
        try {
            OPEN = MethodHandles.lookup().findVarHandle(RankSequences.class, "open", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SampleKey key;
    /** Where the rank's counters live. */
    final RankLedger counters;
    /** Set by the drainer while the rank is outside the newest candidate index (its worker left). */
    volatile boolean departed;
    /** The drainer's reference counts of the block hashes admitted here. */
    final BlockRefCounts refs = new BlockRefCounts();
    /** Where peer replicas' shares of this rank are added (the same counters). */
    final PeerCounters peers;
    /** The prompts this router's sequences are prefilling here (read by the KV-aware pick, see its class). */
    final PrefillingPrefixes prefilling = new PrefillingPrefixes();
    /** Sequences holding anything here (no pick reads it: kept out of the ledger every pick reads). */
    @SuppressWarnings("FieldMayBeFinal") // written through OPEN
    private volatile int open;

    RankSequences(SampleKey key, RankLedger counters) {
        this.key = Objects.requireNonNull(key, "key");
        this.counters = Objects.requireNonNull(counters, "counters");
        this.peers = new PeerCounters(this);
    }

    long prefillTokens() {
        return counters.activePrefillTokens();
    }

    long blocks() {
        return counters.activeBlocks();
    }

    int sequences() {
        return open;
    }

    void addTokens(long delta) {
        counters.addActiveTokens(delta);
    }

    /** Blocks counted one per block (before the drainer deduplicates them, or for good without hashes). */
    void addRaw(long delta) {
        counters.addActiveBlocks(delta);
    }

    void addOpen(int delta) {
        OPEN.getAndAdd(this, delta);
    }

    /** Distinct shared blocks (drainer only); they count in the same counter as the raw ones. */
    void addShared(long delta) {
        counters.addActiveBlocks(delta);
    }
}
