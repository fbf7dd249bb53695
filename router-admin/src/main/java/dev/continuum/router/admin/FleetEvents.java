package dev.continuum.router.admin;

import dev.continuum.router.admin.AdminAuthenticator.Verdict;
import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.proxy.http.StreamSink;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /admin/dynamo/events}: the fleet page's updates as server-sent events. One ticker thread (owned by the
 * process's lifecycle, ticking only while a stream is open) reads the parts once per period (the JSON the page would otherwise poll) and offers each
 * stream one frame holding, under their names, the parts that changed since that stream's last frame; a stream whose client is slow has the frame dropped and gets the next,
 * fresher one (coalesced, never queued). A stream gets at most one frame per period, a heartbeat comment when it has
 * had nothing for {@link #HEARTBEAT_TICKS} periods, and ends when its credentials stop being accepted (an admin
 * reload that changed them), when the client leaves, or when the server shuts down. At most {@link #MAX_STREAMS}
 * streams are open at once; more are refused with 503.
 */
public final class FleetEvents implements AdminRoute.Handler {
    public static final String PATH = "/admin/dynamo/events";
    /** The production rate bound: one frame a second. */
    public static final Duration PERIOD = Duration.ofSeconds(1);
    public static final int MAX_STREAMS = 8;
    /** The ticker thread's name prefix, for the scheduler its owner makes ({@link #ticker}). */
    public static final String THREADS = "admin-fleet-events";
    static final int HEARTBEAT_TICKS = 15;
    static final String STREAMS = "continuum_admin_event_streams";
    static final String FRAMES = "continuum_admin_event_frames_total";
    static final String DROPPED = "continuum_admin_event_frames_dropped_total";
    static final String REFUSED = "continuum_admin_event_streams_refused_total";
    private static final Logger log = LoggerFactory.getLogger(FleetEvents.class);
    private static final byte[] CONNECTED = ": connected\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEARTBEAT = ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final Map<String, String> HEADERS = Map.of(
            "Cache-Control", "no-store",
            "X-Content-Type-Options", "nosniff",
            "X-Accel-Buffering", "no");

    private final AdminAuthenticator authenticator;
    private final Map<String, Callable<LocalResponse>> parts;
    private final Duration period;
    private final int maxStreams;
    private final Set<Stream> streams = ConcurrentHashMap.newKeySet();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicBoolean partFailureLogged = new AtomicBoolean();
    /** The ticker thread's owner: the process's lifecycle starts and stops it ({@link FleetPage#register}). */
    private final OwnedExecutor ticker;
    private final Counter dataFrames;
    private final Counter heartbeats;
    private final Counter dropped;
    private final Counter refused;
    private @Nullable ScheduledFuture<?> ticking;

    /** One open stream and the credentials it was opened with (checked again every period). */
    private static final class Stream {
        final StreamSink sink;
        final @Nullable String authorization;
        final @Nullable String apiKey;
        /** The parts' bodies the stream's last frame brought it up to date with; null before the first frame. */
        byte @Nullable [][] lastParts;
        int idleTicks;

        Stream(StreamSink sink, @Nullable String authorization, @Nullable String apiKey) {
            this.sink = sink;
            this.authorization = authorization;
            this.apiKey = apiKey;
        }
    }

    /**
     * The scheduler a router owns for its event streams: one thread, named {@link #THREADS}{@code -N}; a stop drops
     * the pending tick at once (nothing to finish: the server has ended the streams).
     */
    public static OwnedExecutor ticker() {
        return OwnedExecutor.scheduler(THREADS, Duration.ZERO);
    }

    /**
     * @param parts  what each frame carries: a name and the admin answer (its JSON body) under that name, in order
     * @param ticker the scheduler that runs the ticks, owned (started and stopped) by the caller's lifecycle
     */
    public FleetEvents(AdminAuthenticator authenticator, Map<String, Callable<LocalResponse>> parts,
                       MeterRegistry registry, OwnedExecutor ticker) {
        this(authenticator, parts, registry, ticker, PERIOD, MAX_STREAMS);
    }

    /** Tests only: a faster period and a smaller stream bound. */
    FleetEvents(AdminAuthenticator authenticator, Map<String, Callable<LocalResponse>> parts, MeterRegistry registry,
                OwnedExecutor ticker, Duration period, int maxStreams) {
        this.authenticator = authenticator;
        this.parts = new LinkedHashMap<>(parts);
        this.period = period;
        this.maxStreams = maxStreams;
        this.ticker = Objects.requireNonNull(ticker, "ticker");
        Gauge.builder(STREAMS, open, AtomicInteger::get).description("Open fleet event streams (admin SSE)")
                .register(registry);
        dataFrames = Counter.builder(FRAMES).tag("kind", "data")
                .description("Fleet event frames written to streams, by kind").register(registry);
        heartbeats = Counter.builder(FRAMES).tag("kind", "heartbeat")
                .description("Fleet event frames written to streams, by kind").register(registry);
        dropped = Counter.builder(DROPPED).tag("reason", "slow_client")
                .description("Fleet event frames dropped because the client was not reading").register(registry);
        refused = Counter.builder(REFUSED).tag("reason", "limit")
                .description("Fleet event streams refused, by reason").register(registry);
    }

    @Override
    public LocalResponse handle(LocalRequest request) {
        if (open.get() >= maxStreams) {
            refused.increment();
            return AdminRoute.error(503, "server_error", "too_many_event_streams", "At most " + maxStreams
                    + " fleet event streams may be open at once; the page falls back to polling")
                    .withHeader("Retry-After", "30");
        }
        String authorization = request.header("authorization");
        String apiKey = request.header("x-api-key");
        return LocalResponse.streamed("text/event-stream; charset=utf-8", HEADERS, sink -> {
            // Counted once started (a client that left before never starts): two racing openings past the check
            // above end here, at once.
            if (open.incrementAndGet() > maxStreams) {
                open.decrementAndGet();
                refused.increment();
                sink.end();
                return;
            }
            Stream stream = new Stream(sink, authorization, apiKey);
            streams.add(stream);
            sink.whenEnded(() -> {
                streams.remove(stream);
                open.decrementAndGet();
            });
            sink.offer(CONNECTED);
            if (!startTicking()) {
                sink.end(); // the router is stopping: its ticker is gone
            }
        });
    }

    /** Schedules the ticks unless they run; false when the ticker is not running (before start, after stop). */
    private synchronized boolean startTicking() {
        // A stopped ticker cancelled the ticks without telling: schedule again, and learn it refuses.
        if (ticking == null || ticking.isDone()) {
            long p = period.toNanos();
            try {
                ticking = ticker.scheduledExecutor().scheduleAtFixedRate(this::tick, p, p, TimeUnit.NANOSECONDS);
            } catch (IllegalStateException | RejectedExecutionException e) {
                return false;
            }
        }
        return true;
    }

    private synchronized boolean stopIfIdle() {
        if (streams.isEmpty() && ticking != null) {
            ticking.cancel(false);
            ticking = null;
            return true;
        }
        return false;
    }

    /** One period: one frame for all streams, each stream's credentials checked again. */
    void tick() {
        try {
            if (stopIfIdle()) {
                return;
            }
            byte[][] bodies = bodies();
            for (Stream s : streams) {
                if (authenticator.check(s.authorization, s.apiKey).verdict() != Verdict.ALLOWED) {
                    s.sink.end();
                    continue;
                }
                byte[] frame = bodies == null ? null : frame(bodies, s.lastParts);
                if (frame != null && bodies != null) {
                    send(s, frame, bodies);
                } else if (++s.idleTicks >= HEARTBEAT_TICKS && s.sink.offer(HEARTBEAT)) {
                    s.idleTicks = 0;
                    heartbeats.increment();
                }
            }
        } catch (RuntimeException e) {
            log.warn("fleet events tick failed", e); // never kill the ticker: the next period tries again
        }
    }

    private void send(Stream s, byte[] frame, byte[][] bodies) {
        if (s.sink.offer(frame)) {
            s.lastParts = bodies;
            s.idleTicks = 0;
            dataFrames.increment();
        } else if (s.sink.open()) {
            dropped.increment(); // the next period offers the latest state instead
        }
    }

    /** Every part's JSON body this period, or null when one could not be built. */
    private byte @Nullable [][] bodies() {
        byte[][] bodies = new byte[parts.size()][];
        int i = 0;
        for (Map.Entry<String, Callable<LocalResponse>> part : parts.entrySet()) {
            LocalResponse r;
            try {
                r = part.getValue().call();
            } catch (Exception e) {
                partFailed(part.getKey(), e.toString());
                return null;
            }
            if (r.status() != 200) {
                partFailed(part.getKey(), "status " + r.status());
                return null;
            }
            bodies[i++] = r.body();
        }
        return bodies;
    }

    /**
     * {@code data: {"ranks":...,"workers":...}\n\n} with only the parts that changed since the stream's last frame
     * (the page keeps the others), or null when none did.
     */
    private byte @Nullable [] frame(byte[][] bodies, byte @Nullable [][] last) {
        ByteArrayOutputStream out = null;
        int i = 0;
        for (String name : parts.keySet()) {
            byte[] body = bodies[i];
            if (last == null || !Arrays.equals(body, last[i])) {
                if (out == null) {
                    out = new ByteArrayOutputStream(body.length + 64);
                    out.writeBytes("data: {".getBytes(StandardCharsets.US_ASCII));
                } else {
                    out.write(',');
                }
                out.writeBytes(("\"" + name + "\":").getBytes(StandardCharsets.US_ASCII));
                writeOneLine(out, body);
            }
            i++;
        }
        if (out == null) {
            return null;
        }
        out.writeBytes("}\n\n".getBytes(StandardCharsets.US_ASCII));
        return out.toByteArray();
    }

    /** An SSE data line ends at a line break: compact JSON has none outside strings, but pretty output would. */
    private static void writeOneLine(ByteArrayOutputStream out, byte[] json) {
        for (byte b : json) {
            out.write(b == '\n' || b == '\r' ? ' ' : b);
        }
    }

    private void partFailed(String part, String why) {
        if (partFailureLogged.compareAndSet(false, true)) {
            log.warn("fleet events: part {} failed ({}); frames are skipped while it fails (logged once)",
                    LogSafe.escape(part), LogSafe.escape(why));
        }
    }
}
