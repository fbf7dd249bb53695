package dev.continuum.router.shim.decisions;

import java.util.concurrent.atomic.AtomicLongFieldUpdater;

/**
 * The time to first token a decision predicted for the rank that prefills the request, and the one observed when
 * the response's first bytes came back. The only part of a {@link DecisionRecord} written after the decision: the
 * observation arrives later by nature, once, on the request's event loop ({@link DecisionLog#firstBytes}).
 *
 * @see TtftModel for how a prediction is made and what it learns from
 */
public final class TtftPrediction {
    private static final AtomicLongFieldUpdater<TtftPrediction> OBSERVED =
            AtomicLongFieldUpdater.newUpdater(TtftPrediction.class, "observedNanos");

    private final long workerId;
    private final int dpRank;
    private final long workTokens;
    private final long predictedNanos;
    private final TtftModel.Basis basis;
    private final long dispatchNanos;
    private volatile long observedNanos = -1;

    TtftPrediction(long workerId, int dpRank, long workTokens, long predictedNanos, TtftModel.Basis basis,
            long dispatchNanos) {
        this.workerId = workerId;
        this.dpRank = dpRank;
        this.workTokens = workTokens;
        this.predictedNanos = predictedNanos;
        this.basis = basis;
        this.dispatchNanos = dispatchNanos;
    }

    /** The rank the prediction is for: the winner of the phase that prefills. */
    public long workerId() {
        return workerId;
    }

    public int dpRank() {
        return dpRank;
    }

    /** Prompt tokens the rank had to prefill before this request's first token: its backlog and our uncached ones. */
    public long workTokens() {
        return workTokens;
    }

    /** The predicted time from dispatch to first bytes, -1 when no rate was known yet ({@link #basis} none). */
    public long predictedNanos() {
        return predictedNanos;
    }

    /** Which rate the prediction used. */
    public TtftModel.Basis basis() {
        return basis;
    }

    long dispatchNanos() {
        return dispatchNanos;
    }

    /** The observed time from dispatch to the first response bytes, -1 until (or unless) they came. */
    public long observedNanos() {
        return observedNanos;
    }

    /** Sets the observation once; false when it was already set. */
    boolean observe(long nanos) {
        return OBSERVED.compareAndSet(this, -1, Math.max(0, nanos));
    }
}
