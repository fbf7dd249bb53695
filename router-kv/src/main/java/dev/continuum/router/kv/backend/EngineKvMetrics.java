package dev.continuum.router.kv.backend;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;

/**
 * Meters of the engines' native KV-event streams ({@code transport: zmq} sources), all sources together. Labels
 * are closed sets (an event's kind, a drop's reason, a replay's result); no backend or address appears in one.
 */
public final class EngineKvMetrics {
    /** Why a batch or an event was not applied. */
    public enum Drop {
        /** A payload above {@code max_event_bytes}: dropped unread. */
        OVERSIZED,
        /** Not {@code [topic, seq, payload]}, or a sequence frame that is not 8 bytes. */
        BAD_FRAME,
        /** {@link EngineKvDecoder.Drop#MALFORMED}: a batch whose structure could not be read. */
        MALFORMED,
        UNKNOWN_TAG,
        WRONG_TYPE,
        TOO_LARGE,
        /** A batch already applied (a replay overlapping what arrived live). */
        DUPLICATE,
        /** A stored event that would pass {@code max_blocks_per_backend}. */
        OVER_CAPACITY,
        /** A stored event without token IDs: the router cannot name its blocks ({@link EngineBlockMap}). */
        NO_TOKENS,
        /** A stored event whose parent block the router never saw stored (it joined later, or the parent left). */
        UNKNOWN_PARENT;

        static Drop of(EngineKvDecoder.Drop d) {
            return switch (d) {
                case MALFORMED -> MALFORMED;
                case UNKNOWN_TAG -> UNKNOWN_TAG;
                case WRONG_TYPE -> WRONG_TYPE;
                case TOO_LARGE -> TOO_LARGE;
            };
        }
    }

    /** How a gap ended. */
    public enum Replay {
        /** The replay socket sent every missing batch. */
        RECOVERED,
        /** It did not (batches beyond its buffer, a timeout, a refused or lost connection): the backend was cleared. */
        FAILED,
        /** No replay socket is configured, or the gap was too long to ask for: the backend was cleared. */
        UNAVAILABLE
    }

    private final Counter[] events = new Counter[KvCacheEvent.Kind.values().length];
    private final Counter[] drops = new Counter[Drop.values().length];
    private final Counter[] replays = new Counter[Replay.values().length];
    private final Counter gaps;
    private final Counter restarts;

    public EngineKvMetrics(MeterRegistry registry) {
        for (KvCacheEvent.Kind k : KvCacheEvent.Kind.values()) {
            events[k.ordinal()] = Counter.builder("continuum.kv.cache.index.engine.events")
                    .tag("kind", k.name().toLowerCase(Locale.ROOT))
                    .description("events applied from engines' native KV-event streams, by kind").register(registry);
        }
        for (Drop d : Drop.values()) {
            drops[d.ordinal()] = Counter.builder("continuum.kv.cache.index.engine.drops")
                    .tag("reason", d.name().toLowerCase(Locale.ROOT))
                    .description("batches or events of engines' KV-event streams not applied, by reason")
                    .register(registry);
        }
        for (Replay r : Replay.values()) {
            replays[r.ordinal()] = Counter.builder("continuum.kv.cache.index.engine.replays")
                    .tag("result", r.name().toLowerCase(Locale.ROOT))
                    .description("sequence gaps of engines' KV-event streams, by how they ended").register(registry);
        }
        gaps = Counter.builder("continuum.kv.cache.index.engine.gaps")
                .description("sequence gaps seen on engines' KV-event streams").register(registry);
        restarts = Counter.builder("continuum.kv.cache.index.engine.restarts")
                .description("sequences that went backwards (an engine restarted): its backend was cleared")
                .register(registry);
    }

    public void event(KvCacheEvent.Kind kind) {
        events[kind.ordinal()].increment();
    }

    public void drop(Drop drop) {
        drops[drop.ordinal()].increment();
    }

    public void replay(Replay result) {
        replays[result.ordinal()].increment();
    }

    public void gap() {
        gaps.increment();
    }

    public void restart() {
        restarts.increment();
    }
}
