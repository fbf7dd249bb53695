package dev.continuum.router.kv.backend;

import dev.continuum.router.eventbus.BusProtocol;
import dev.continuum.router.eventbus.BackendTls;
import dev.continuum.router.eventbus.BusStreamException;
import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.SseParser;
import dev.continuum.router.eventbus.SseUpstream;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ConnectTimeoutException;
import io.netty.util.ReferenceCountUtil;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code kv_cache_index} source: keeps its backend's SSE KV-event stream open, applies each event to the
 * {@link BackendKvIndex}, and after any end reopens it with {@code Last-Event-ID} (or the bus's
 * {@code last_event_id}) set to the last event it applied, skipping events at or below that ID so a replay
 * neither loses nor doubles anything. Over the bus, while no kv-listener session can carry it, it waits for the
 * bus's session-change signal instead of retrying.
 *
 * <p>Its control state changes under its own monitor (open, end, stop: rare); events are applied on the
 * stream's event loop without it. Only the current stream's events are applied (each stream has a generation).
 * What the admin view reads ({@link #view}) is an immutable {@link Status} replaced on each change of state, and
 * volatile fields the event path writes: no reader takes the monitor.
 */
public final class KvEventSource implements KvIndexSource {
    private static final Logger LOG = LoggerFactory.getLogger(KvEventSource.class);
    public static final Duration RECONNECT_FLOOR = Duration.ofMillis(500);
    public static final Duration RECONNECT_CEILING = Duration.ofSeconds(30);
    /** The reasons are short phrases; the bound only guards against a future one that is not. */
    public static final int MAX_ERROR_CHARS = 160;

    private final KvCacheIndexConfig.Source source;
    private final KvStreamOpener opener;
    private final @Nullable EventBus bus;
    private final BackendKvIndex index;
    private final KvSourceMetrics metrics;
    private final ScheduledExecutorService timer;
    private final int maxBlocks;
    private final int maxEventBytes;

    private final Clock clock;
    private final AtomicLongArray failureCounts = new AtomicLongArray(Failure.values().length);
    private volatile @Nullable Long cursor;
    private volatile long lastEventAtMillis; // 0: none yet
    private KvSourceMetrics.@Nullable State state;
    private volatile Status status = new Status(KvSourceMetrics.State.CONNECTING, null, null, 0);
    private volatile int generation;
    private volatile int failures;
    private volatile boolean delivered; // the current stream applied an event
    private volatile SseUpstream.@Nullable Refused refused; // the current stream's answer was not an SSE stream
    private volatile boolean stopped;
    private KvStreamOpener.@Nullable Opened current;
    private @Nullable AutoCloseable pendingWake;

    public KvEventSource(KvCacheIndexConfig.Source source, KvStreamOpener opener, @Nullable EventBus bus,
                  BackendKvIndex index, KvSourceMetrics metrics, ScheduledExecutorService timer, int maxBlocks,
                  int maxEventBytes, Clock clock) {
        this.source = source;
        this.opener = opener;
        this.bus = bus;
        this.index = index;
        this.metrics = metrics;
        this.timer = timer;
        this.maxBlocks = maxBlocks;
        this.maxEventBytes = maxEventBytes;
        this.clock = clock;
    }

    /**
     * Why an attempt to open or read a stream failed (a stream that ends after its answer is not a failure). Counted
     * per source in the admin view and, for all sources together, in
     * {@code continuum_kv_cache_index_stream_failures_total{reason}}.
     */
    public enum Failure {
        /** The TLS handshake was refused: an untrusted certificate, a host mismatch, no common protocol. */
        TLS,
        /** No TCP connection (refused, timed out, unknown host). */
        CONNECT,
        /** The backend answered, but not {@code 200 text/event-stream} (direct sources; a kv-listener logs it). */
        HTTP,
        /** The bus could not open the stream (other than no session: that source is {@code pending}). */
        EVENT_BUS;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * What the admin view shows besides the counters: replaced whole, under the monitor, when the state, the carrier
     * or the last error changes.
     *
     * @param carrier     the kv-listener session relaying the stream now, or null
     * @param lastError   the last failure or end, in words from a closed set; null before the first
     * @param lastErrorAt its wall-clock time in epoch milliseconds
     */
    public record Status(KvSourceMetrics.State state, KvStreamOpener.@Nullable Carrier carrier, @Nullable String lastError,
                  long lastErrorAt) {
    }

    /** The admin view's row, from the current status and counters; takes no lock. */
    @Override
    public KvSourceView view() {
        Status s = status;
        KvStreamOpener.Carrier c = s.carrier();
        long at = lastEventAtMillis;
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Failure f : Failure.values()) {
            counts.put(f.label(), failureCounts.get(f.ordinal()));
        }
        return new KvSourceView(source.backend(), source.transport().yamlName(), s.state().label(),
                c == null ? null : c.kvListener(), c == null ? null : c.clientId(), cursor,
                index.size(source.backend()), at == 0 ? null : Instant.ofEpochMilli(at), s.lastError(),
                s.lastError() == null ? null : Instant.ofEpochMilli(s.lastErrorAt()), counts);
    }

    @Override
    public KvCacheIndexConfig.Source source() {
        return source;
    }

    /** The ID of the last event applied, the resume point; null before the first. */
    public @Nullable Long lastEventId() {
        return cursor;
    }

    public synchronized KvSourceMetrics.@Nullable State state() {
        return state;
    }

    @Override
    public synchronized void start() {
        open();
    }

    /** Closes the stream and forgets what the backend held: nothing keeps that knowledge fresh any more. */
    @Override
    public void stop() {
        KvStreamOpener.Opened open;
        synchronized (this) {
            stopped = true;
            generation++;
            open = current;
            current = null;
            closeWake();
            setState(null);
        }
        if (open != null) {
            open.close().run();
        }
        index.clear(source.backend());
    }

    private void setState(KvSourceMetrics.@Nullable State next) {
        metrics.state(state, next);
        state = next;
        if (next != null) {
            Status s = status;
            // Only a connected stream has a carrier.
            status = new Status(next, next == KvSourceMetrics.State.CONNECTED ? s.carrier() : null, s.lastError(),
                    s.lastErrorAt());
        }
    }

    /** Records why the last attempt failed or ended (under the monitor). */
    private void error(String reason) {
        Status s = status;
        status = new Status(s.state(), s.carrier(), LogSafe.escape(reason, MAX_ERROR_CHARS), clock.millis());
    }

    private void closeWake() {
        AutoCloseable wake = pendingWake;
        pendingWake = null;
        if (wake != null) {
            try {
                wake.close();
            } catch (Exception e) {
                // removing a listener from a list does not fail
            }
        }
    }

    private void open() {
        if (stopped) {
            return;
        }
        int gen = ++generation;
        delivered = false;
        refused = null;
        setState(KvSourceMetrics.State.CONNECTING);
        opener.open(source.backend(), cursor, new Consumer(gen)).whenComplete((opened, error) -> {
            boolean late;
            synchronized (this) {
                late = stopped || gen != generation;
                if (!late && error == null) {
                    current = opened;
                    Status st = status;
                    status = new Status(st.state(), opened.carrier(), st.lastError(), st.lastErrorAt());
                    setState(KvSourceMetrics.State.CONNECTED);
                }
            }
            if (error != null) {
                failed(gen, error);
            } else if (late) {
                opened.close().run();
            } else {
                opened.channel().closeFuture().addListener(f -> ended(gen, opened));
            }
        });
    }

    private synchronized void failed(int gen, Throwable error) {
        if (stopped || gen != generation) {
            return;
        }
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof BusStreamException bus && bus.reason() == BusStreamException.Reason.NO_SESSION
                && this.bus != null) {
            // No kv-listener can carry it now: wait for the sessions to change, then try again.
            setState(KvSourceMetrics.State.PENDING);
            closeWake();
            pendingWake = this.bus.onSessionsChanged(() -> timer.execute(() -> wake(gen)));
            return;
        }
        Failure kind = failureKind(cause);
        String reason = failureReason(kind, cause);
        countFailure(kind);
        error(reason);
        LOG.warn("kv_cache_index source {}: cannot open its stream: {} ({})", LogSafe.escape(source.backend()),
                reason, LogSafe.escape(String.valueOf(cause.getMessage())));
        retry(backoff());
    }

    /** Per source for the admin row, and for all sources in the metric. */
    private void countFailure(Failure kind) {
        failureCounts.incrementAndGet(kind.ordinal());
        metrics.failure(kind);
    }

    private static Failure failureKind(Throwable cause) {
        if (cause instanceof BusStreamException bus) {
            return BusProtocol.TARGET_TLS_FAILED.equals(bus.code()) ? Failure.TLS : Failure.EVENT_BUS;
        }
        return BackendTls.isTls(cause) ? Failure.TLS : Failure.CONNECT;
    }

    /** Words from a closed set (the bus's code is restricted to [A-Za-z0-9_.-]{1,64}): never a peer's free text. */
    private static String failureReason(Failure kind, Throwable cause) {
        if (cause instanceof BusStreamException bus) {
            String what = bus.reason().name().toLowerCase(Locale.ROOT);
            return kind == Failure.TLS ? "tls: refused by the kv-listener (target_tls_failed)"
                    : "event_bus: " + what + (bus.code().isEmpty() ? "" : " (" + bus.code() + ")");
        }
        if (kind == Failure.TLS) {
            return "tls: " + BackendTls.reason(cause);
        }
        if (cause instanceof ConnectTimeoutException) {
            return "connect: timed out";
        }
        if (cause instanceof ConnectException) {
            return "connect: refused";
        }
        if (cause instanceof UnknownHostException || cause instanceof UnresolvedAddressException) {
            return "connect: unknown host";
        }
        return "connect: failed";
    }

    private synchronized void wake(int gen) {
        if (!stopped && gen == generation && state == KvSourceMetrics.State.PENDING) {
            closeWake();
            open();
        }
    }

    private synchronized void ended(int gen, KvStreamOpener.Opened opened) {
        if (stopped || gen != generation) {
            return;
        }
        current = null;
        // A carrier that went away (a kv-listener drained or died) is not the stream's fault: reopen at the floor,
        // on another session. Nor is the end of a stream that delivered events.
        boolean lost = opened.carrierLost().getAsBoolean();
        boolean fast = lost || delivered;
        SseUpstream.Refused refused = this.refused;
        if (refused != null) {
            countFailure(Failure.HTTP);
            error(refused.reason());
        } else {
            error(lost ? "event_bus: the kv-listener drained or went away" : "stream: ended");
        }
        retry(fast ? RECONNECT_FLOOR : backoff());
    }

    private Duration backoff() {
        long nanos = Math.min(RECONNECT_CEILING.toNanos(), RECONNECT_FLOOR.toNanos() << Math.min(failures, 6));
        failures++;
        return Duration.ofNanos(nanos);
    }

    private void retry(Duration delay) {
        setState(KvSourceMetrics.State.BACKOFF);
        int gen = ++generation;
        timer.schedule(() -> {
            synchronized (this) {
                if (!stopped && gen == generation) {
                    open();
                }
            }
        }, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Applies one parsed event; runs on the stream's event loop. */
    private void apply(int gen, @Nullable String id, String data) {
        if (gen != generation || stopped) {
            return;
        }
        Long eventId = KvCacheEvent.eventId(id);
        KvCacheEvent event = KvCacheEvent.parse(data);
        Long last = cursor;
        if (eventId != null && last != null && Long.compareUnsigned(eventId, last) <= 0
                && (event == null || event.kind() != KvCacheEvent.Kind.CLEARED)) {
            metrics.event(KvSourceMetrics.Result.DUPLICATE); // replayed after a resume
            return;
        }
        if (event == null) {
            // Received but unusable: a replay would not mend it, so the cursor moves past it.
            advance(eventId);
            metrics.event(KvSourceMetrics.Result.MALFORMED);
            return;
        }
        String backend = source.backend();
        switch (event.kind()) {
            case STORED -> {
                if (!index.store(backend, event.blockHashes(), maxBlocks)) {
                    metrics.event(KvSourceMetrics.Result.OVER_CAPACITY);
                    advance(eventId);
                    return;
                }
            }
            case REMOVED -> index.remove(backend, event.blockHashes());
            case CLEARED -> index.clear(backend);
        }
        advance(eventId);
        failures = 0;
        delivered = true;
        lastEventAtMillis = clock.millis();
        metrics.event(KvSourceMetrics.Result.APPLIED);
    }

    private void advance(@Nullable Long eventId) {
        if (eventId != null) {
            cursor = eventId;
        }
    }

    /** The end of the pipeline: the SSE body's bytes, parsed and applied. */
    private final class Consumer extends ChannelInboundHandlerAdapter implements SseParser.Listener {
        private final int gen;
        private final SseParser parser;

        Consumer(int gen) {
            this.gen = gen;
            this.parser = new SseParser(maxEventBytes, this);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof ByteBuf bytes) {
                    parser.feed(bytes);
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void event(@Nullable String id, String type, String data) {
            apply(gen, id, data);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof SseUpstream.Refused r) {
                if (gen == generation) {
                    refused = r;
                }
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void oversized() {
            metrics.event(KvSourceMetrics.Result.OVERSIZED);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
