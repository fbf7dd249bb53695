package dev.continuum.router.kv.backend;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToDoubleFunction;

/**
 * The backend KV cache index's meters. Labels are closed sets: an event's {@code result} and a source's
 * {@code state}; no backend, session or URL appears in a label.
 */
public final class KvSourceMetrics {
    /** What became of one SSE event. */
    public enum Result {
        APPLIED, DUPLICATE, MALFORMED, OVERSIZED, OVER_CAPACITY;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Where one source stands. */
    public enum State {
        PENDING, CONNECTING, CONNECTED, BACKOFF;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final Counter[] events = new Counter[Result.values().length];
    private final Counter[] failures = new Counter[KvEventSource.Failure.values().length];
    private final AtomicInteger[] states = new AtomicInteger[State.values().length];

    public KvSourceMetrics(MeterRegistry registry, BackendKvIndex index) {
        for (Result r : Result.values()) {
            events[r.ordinal()] = Counter.builder("continuum.kv.cache.index.events").tag("result", r.label())
                    .description("backend KV events read from kv_cache_index sources, by what became of them")
                    .register(registry);
        }
        for (KvEventSource.Failure f : KvEventSource.Failure.values()) {
            failures[f.ordinal()] = Counter.builder("continuum.kv.cache.index.stream.failures")
                    .tag("reason", f.label())
                    .description("failed attempts to open or read a kv_cache_index source's stream, by reason")
                    .register(registry);
        }
        for (State s : State.values()) {
            AtomicInteger n = new AtomicInteger();
            states[s.ordinal()] = n;
            Gauge.builder("continuum.kv.cache.index.sources", n, AtomicInteger::get).tag("state", s.label())
                    .description("kv_cache_index sources by state").register(registry);
        }
        ToDoubleFunction<BackendKvIndex> size = BackendKvIndex::size;
        Gauge.builder("continuum.kv.cache.index.blocks", index, size)
                .description("blocks the backend KV cache index holds, all backends together").register(registry);
    }

    public void event(Result result) {
        events[result.ordinal()].increment();
    }

    public void failure(KvEventSource.Failure failure) {
        failures[failure.ordinal()].increment();
    }


    /** Moves one source from {@code from} (null: new) to {@code to} (null: gone). */
    public void state(@org.jspecify.annotations.Nullable State from, @org.jspecify.annotations.Nullable State to) {
        if (from == to) {
            return;
        }
        if (from != null) {
            states[from.ordinal()].decrementAndGet();
        }
        if (to != null) {
            states[to.ordinal()].incrementAndGet();
        }
    }
}
