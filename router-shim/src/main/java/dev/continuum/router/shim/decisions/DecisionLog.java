package dev.continuum.router.shim.decisions;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
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

    public DecisionLog(Supplier<DecisionSettings> settings, MeterRegistry registry) {
        this.settings = Objects.requireNonNull(settings, "settings");
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
        byResult.computeIfAbsent(r.result(), k -> new LongAdder()).increment();
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
