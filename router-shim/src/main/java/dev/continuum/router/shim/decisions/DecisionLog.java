package dev.continuum.router.shim.decisions;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The decisions the router keeps: the ring (bounded by {@code dynamo.decisions.max_records} and, through each
 * record's candidate budget, {@code max_bytes}) and the decision-quality counters every recorded decision feeds.
 * Settings are read per decision; a new {@code max_records} starts a new, empty ring.
 */
public final class DecisionLog {
    private final Supplier<DecisionSettings> settings;
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong heldBytes = new AtomicLong();
    private volatile DecisionRing ring;
    private final Counter recorded;
    private final Counter avoidable;
    private final Counter winnerOverlap;
    private final Counter bestOverlap;
    private final Counter scoredPrompts;
    /** Records by result label (a closed set: the KV picker's results and {@code load}). */
    private final ConcurrentHashMap<String, LongAdder> byResult = new ConcurrentHashMap<>();
    private final TtftModel ttft = new TtftModel();
    private final LongSupplier ticker;
    /** Observed over predicted time to first token, by the rate the prediction used ({@link TtftModel.Basis}). */
    private final DistributionSummary ttftByRank;
    private final DistributionSummary ttftByFleet;

    public DecisionLog(Supplier<DecisionSettings> settings, MeterRegistry registry) {
        this(settings, registry, System::nanoTime);
    }

    /** With the monotonic clock that times dispatches and their first bytes (tests inject one). */
    public DecisionLog(Supplier<DecisionSettings> settings, MeterRegistry registry, LongSupplier ticker) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        ttftByRank = ttftRatio(registry, TtftModel.Basis.RANK);
        ttftByFleet = ttftRatio(registry, TtftModel.Basis.FLEET);
        this.ring = new DecisionRing(settings.get().maxRecords());
        recorded = Counter.builder("continuum.dynamo.decisions.recorded")
                .description("Routed requests whose decision record was kept").register(registry);
        avoidable = Counter.builder("continuum.dynamo.decision.avoidable.prefill.tokens")
                .description("Prompt tokens a winner had to prefill that an eligible, not-busier rank already held")
                .register(registry);
        winnerOverlap = Counter.builder("continuum.dynamo.decision.winner.overlap.blocks")
                .description("Leading prompt blocks the prefilling winner held").register(registry);
        bestOverlap = Counter.builder("continuum.dynamo.decision.best.overlap.blocks")
                .description("Leading prompt blocks the best eligible candidate held").register(registry);
        scoredPrompts = Counter.builder("continuum.dynamo.decision.scored.prompt.tokens")
                .description("Prompt tokens of decisions the KV formula scored").register(registry);
    }

    private static DistributionSummary ttftRatio(MeterRegistry registry, TtftModel.Basis basis) {
        return DistributionSummary.builder("continuum.dynamo.decision.ttft.ratio").tag("basis", basis.label())
                .description("Observed over predicted time to first token of the rank that prefilled")
                .serviceLevelObjectives(0.25, 0.5, 0.8, 1.25, 2, 4).register(registry);
    }

    /** The prediction for the rank that prefills, {@code work} tokens, dispatched now. */
    public TtftPrediction predict(long workerId, int dpRank, long work) {
        return ttft.predict(workerId, dpRank, work, ticker.getAsLong());
    }

    /**
     * The first response bytes of decision {@code id} came back: its observed time to first token teaches the
     * rank's rate and, when it was predicted, counts in the error metric. Ignored when the record left the ring,
     * had no prediction, or was already observed (a retry's plan).
     */
    public void firstBytes(long id) {
        DecisionRecord r = ring.get(id);
        TtftPrediction p = r == null ? null : r.ttft();
        if (p == null) {
            return;
        }
        long observed = ticker.getAsLong() - p.dispatchNanos();
        if (!p.observe(observed)) {
            return;
        }
        if (p.predictedNanos() > 0) {
            double ratio = (double) Math.max(0, observed) / p.predictedNanos();
            (p.basis() == TtftModel.Basis.RANK ? ttftByRank : ttftByFleet).record(ratio);
        }
        ttft.learn(p.workerId(), p.dpRank(), p.workTokens(), observed);
    }

    /** The learned rates (read by the admin view and tests). */
    public TtftModel ttftModel() {
        return ttft;
    }

    /** The live settings (read once per decision by the recorder). */
    public DecisionSettings settings() {
        return settings.get();
    }

    /** The id the next record gets. */
    public long nextId() {
        return ids.getAndIncrement();
    }

    /** Keeps {@code r} (displacing the oldest when full) and counts its quality figures. */
    public void add(DecisionRecord r) {
        DecisionRing current = ring(settings.get());
        DecisionRecord old = current.put(r);
        heldBytes.addAndGet(r.estimatedBytes() - (old == null ? 0 : old.estimatedBytes()));
        recorded.increment();
        LongAdder results = byResult.get(r.result()); // a plain read once the label was seen: no bin lock
        if (results == null) {
            results = byResult.computeIfAbsent(r.result(), k -> new LongAdder());
        }
        results.increment();
        if (r.prompt().promptTokens() >= 0 && !r.phases().isEmpty()) {
            scoredPrompts.increment(r.prompt().promptTokens());
            winnerOverlap.increment(r.winnerOverlap());
            bestOverlap.increment(r.bestOverlap());
            avoidable.increment(r.avoidableTokens());
        }
    }

    private DecisionRing ring(DecisionSettings s) {
        DecisionRing current = ring;
        if (current.capacity() == s.maxRecords()) {
            return current; // steady state: one volatile read
        }
        // max_records was reloaded: the first writer to see it swaps in the new ring (a lock taken only then).
        synchronized (this) {
            current = ring;
            if (current.capacity() != s.maxRecords()) {
                current = new DecisionRing(s.maxRecords());
                ring = current;
                heldBytes.set(0);
            }
            return current;
        }
    }

    public @Nullable DecisionRecord get(long id) {
        return ring.get(id);
    }

    /** The newest records matching {@code q}, newest first. */
    public List<DecisionRecord> query(DecisionQuery q) {
        long newest = ids.get() - 1;
        return ring.newest(newest, q.beforeId(), q.limit(), q.filter());
    }

    /** The running totals the page shows beside the records. */
    public Totals totals() {
        return new Totals((long) recorded.count(), heldBytes.get(), ring.capacity(),
                (long) avoidable.count(), (long) winnerOverlap.count(), (long) bestOverlap.count(),
                (long) scoredPrompts.count(), results());
    }

    private Map<String, Long> results() {
        Map<String, Long> out = new TreeMap<>();
        byResult.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** Counter values since start, and the ring's current weight. */
    public record Totals(long recorded, long heldBytes, int capacity, long avoidableTokens, long winnerOverlapBlocks,
                         long bestOverlapBlocks, long scoredPromptTokens, Map<String, Long> byResult) {
        public Totals {
            byResult = Map.copyOf(byResult);
        }
    }
}
