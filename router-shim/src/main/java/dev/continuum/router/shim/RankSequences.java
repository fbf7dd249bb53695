package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * The active sequences of one (worker, dp_rank): what the router dispatched there and has not seen finish, as
 * three counters a pick reads without locking ({@link ActiveSequences} has the rules). Picking threads add and
 * subtract the raw parts atomically; the deduplicated part ({@link #sharedBlocks}) and the block reference
 * counts behind it are written only by the sequence drainer.
 */
final class RankSequences {
    private static final VarHandle TOKENS;
    private static final VarHandle RAW;
    private static final VarHandle OPEN;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TOKENS = lookup.findVarHandle(RankSequences.class, "prefillTokens", long.class);
            RAW = lookup.findVarHandle(RankSequences.class, "rawBlocks", long.class);
            OPEN = lookup.findVarHandle(RankSequences.class, "open", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SampleKey key;
    /** Uncached prompt tokens of the sequences that prefill here and have not produced their first token. */
    @SuppressWarnings("FieldMayBeFinal") // written through TOKENS
    private volatile long prefillTokens;
    /** Blocks counted one per block: requests without hashes, and hashed ones until the drainer admits them. */
    @SuppressWarnings("FieldMayBeFinal") // written through RAW
    private volatile long rawBlocks;
    /** Distinct block hashes held by admitted sequences (drainer-written). */
    private volatile long sharedBlocks;
    /** Sequences holding anything here. */
    @SuppressWarnings("FieldMayBeFinal") // written through OPEN
    private volatile int open;
    /** Set by the drainer while the rank is outside the newest candidate index (its worker left). */
    volatile boolean departed;
    /** The drainer's reference counts of the block hashes admitted here. */
    final BlockRefCounts refs = new BlockRefCounts();

    RankSequences(SampleKey key) {
        this.key = Objects.requireNonNull(key, "key");
    }

    /** Active uncached prompt tokens (the prefill backlog of this router's own dispatches). */
    long prefillTokens() {
        return prefillTokens;
    }

    /** Active blocks, shared prefixes counted once among the admitted sequences. */
    long blocks() {
        return LoadCosts.add(rawBlocks, sharedBlocks);
    }

    int sequences() {
        return open;
    }

    void addTokens(long delta) {
        TOKENS.getAndAdd(this, delta);
    }

    void addRaw(long delta) {
        RAW.getAndAdd(this, delta);
    }

    void addOpen(int delta) {
        OPEN.getAndAdd(this, delta);
    }

    /** Drainer only. */
    void addShared(long delta) {
        sharedBlocks = sharedBlocks + delta;
    }
}
