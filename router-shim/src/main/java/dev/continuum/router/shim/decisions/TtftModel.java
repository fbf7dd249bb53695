package dev.continuum.router.shim.decisions;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * How a decision's cost becomes a time: the rank that prefills a request has {@code work} prompt tokens to get
 * through before the request's first token (its prefill backlog as the picker counted it, sample plus the router's
 * unanswered dispatches, and this request's uncached tokens), and it gets through them at a rate learned from its
 * own past answers: each observation's {@code work / (first bytes - dispatch)} moves the rank's rate by a fifth of
 * the difference. A rank seen for the first time is predicted at the fleet's rate (the same average over every
 * rank's observations); before any observation there is no prediction. The rate absorbs the fixed part of the time
 * (network, frontend, the first decode step), so small prompts read slower than large ones: the error metric is
 * meant for trends and for comparing settings, not as an exact clock.
 *
 * <p>Rates live in a fixed open-addressing table ({@link #SLOTS} ranks, probed at most {@link #PROBES} slots),
 * read without locks on every prediction and written only by observations; a rank that finds no slot uses the
 * fleet's rate. Concurrent observations of one rank may lose an update (a moving average, so harmless).
 */
public final class TtftModel {
    /** Which rate a prediction used; a closed set (the {@code basis} label of the error metric). */
    public enum Basis {
        RANK("rank"), FLEET("fleet"), NONE("none");

        private final String label;

        Basis(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }

    static final int SLOTS = 16_384;
    static final int PROBES = 16;
    /** Weight of a new observation in a rank's rate and in the fleet's. */
    static final double RANK_ALPHA = 0.2;
    static final double FLEET_ALPHA = 0.05;
    /** Observations faster than this are clamped to it: a rate is never infinite. */
    static final long MIN_NANOS = 100_000;

    private final AtomicReferenceArray<Rate> table = new AtomicReferenceArray<>(SLOTS);
    private volatile double fleetRate = Double.NaN;

    /** One rank's learned rate, in prompt tokens per second. */
    private static final class Rate {
        final long workerId;
        final int dpRank;
        volatile double tokensPerSecond;

        Rate(long workerId, int dpRank, double tokensPerSecond) {
            this.workerId = workerId;
            this.dpRank = dpRank;
            this.tokensPerSecond = tokensPerSecond;
        }
    }

    /** The prediction for {@code work} tokens on this rank, made at {@code nowNanos}. */
    public TtftPrediction predict(long workerId, int dpRank, long work, long nowNanos) {
        Rate r = find(workerId, dpRank);
        double rate = r == null ? Double.NaN : r.tokensPerSecond;
        Basis basis = Basis.RANK;
        if (!(rate > 0)) {
            rate = fleetRate;
            basis = Basis.FLEET;
        }
        long predicted = -1;
        if (rate > 0) {
            predicted = (long) Math.min(Long.MAX_VALUE, Math.max(0, work) / rate * 1e9);
        } else {
            basis = Basis.NONE;
        }
        return new TtftPrediction(workerId, dpRank, work, predicted, basis, nowNanos);
    }

    /** Learns from one observation: {@code work} tokens took {@code nanos} to the first bytes. */
    public void learn(long workerId, int dpRank, long work, long nanos) {
        if (work <= 0) {
            return; // nothing was prefilled: the time says nothing about the rate
        }
        double sample = work / (Math.max(MIN_NANOS, nanos) / 1e9);
        double fleet = fleetRate;
        fleetRate = Double.isNaN(fleet) ? sample : fleet + FLEET_ALPHA * (sample - fleet);
        int home = slot(workerId, dpRank);
        for (int i = 0; i < PROBES; i++) {
            int at = (home + i) & (SLOTS - 1);
            Rate r = table.get(at);
            if (r == null) {
                if (table.compareAndSet(at, null, new Rate(workerId, dpRank, sample))) {
                    return;
                }
                r = table.get(at);
            }
            if (r.workerId == workerId && r.dpRank == dpRank) {
                double old = r.tokensPerSecond;
                r.tokensPerSecond = old + RANK_ALPHA * (sample - old);
                return;
            }
        }
        // Table full around this rank: it is predicted at the fleet's rate.
    }

    /** The rank's learned rate in tokens per second, NaN when it has none. */
    public double rate(long workerId, int dpRank) {
        Rate r = find(workerId, dpRank);
        return r == null ? Double.NaN : r.tokensPerSecond;
    }

    /** The fleet's rate in tokens per second, NaN before the first observation. */
    public double fleetRate() {
        return fleetRate;
    }

    private @Nullable Rate find(long workerId, int dpRank) {
        int home = slot(workerId, dpRank);
        for (int i = 0; i < PROBES; i++) {
            Rate r = table.get((home + i) & (SLOTS - 1));
            if (r == null) {
                return null;
            }
            if (r.workerId == workerId && r.dpRank == dpRank) {
                return r;
            }
        }
        return null;
    }

    private static int slot(long workerId, int dpRank) {
        long h = (workerId ^ ((long) dpRank << 32 | dpRank)) * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & (SLOTS - 1);
    }
}
