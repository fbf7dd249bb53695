package dev.continuum.router.kv.backend;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.zmtp.RefusedAddressException;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpListener;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.eventplane.zmtp.ZmtpSubscriberHandler;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@code transport: zmq} source: subscribes to an engine's own KV-event PUB socket (vLLM or SGLang
 * {@code ZmqEventPublisher}: {@code [topic, seq, payload]} messages) through the router's bounded ZMTP client and
 * applies each batch ({@link EngineKvDecoder}) to the {@link BackendKvIndex}.
 *
 * <p><b>Sequence.</b> Batches apply in sequence order. A gap asks the engine's replay (ROUTER) socket, when
 * configured, for the batches from the first missing one: a DEALER connection sends {@code ["", start]} and reads
 * {@code ["", seq, payload]} replies (and, from vLLM PR #45177 on, {@code ["", topic, seq, payload]}) up to the
 * end marker {@code seq = -1}. Live batches that arrive meanwhile are held, bounded, and applied after. A gap
 * that cannot be filled (no replay socket, a gap longer than the engine keeps, a timeout, too much held) clears
 * the backend, since the index no longer knows what it holds, and resumes from the next batch. A sequence that
 * goes backwards is a restarted engine: its cache is new, so the backend is cleared too.
 *
 * <p><b>Threads.</b> Everything but {@link #view} runs on one event loop, which both connections use: no lock.
 * The admin view reads volatile fields only.
 */
public final class EngineKvEventSource implements KvIndexSource {
    private static final Logger LOG = LoggerFactory.getLogger(EngineKvEventSource.class);
    /** A longer gap is not asked for: vLLM and SGLang keep 10,000 batches for replay by default. */
    public static final long MAX_REPLAY_GAP = 10_000;
    /** Live batches held while a replay runs; past either bound the replay is abandoned. */
    public static final int MAX_HELD_BATCHES = 1024;
    public static final int MAX_HELD_BYTES = 8 * 1024 * 1024;
    public static final Duration REPLAY_TIMEOUT = Duration.ofSeconds(5);
    private static final long END_OF_REPLAY = -1L;

    /** Why a connection attempt failed or ended badly: admin row keys. */
    public enum Failure {
        /** No TCP connection (refused, timed out, unknown host, an address the policy forbids). */
        CONNECT,
        /** The peer broke ZMTP or a bound (an oversized frame, a wrong socket type): the connection was refused. */
        PROTOCOL,
        /** A replay that did not fill its gap. */
        REPLAY
    }

    private final KvCacheIndexConfig.Source source;
    private final KvCacheIndexConfig.Zmq zmq;
    private final byte[] topic;
    private final ZmtpConnector connector;
    private final EventLoop loop;
    private final BackendKvIndex index;
    private final KvSourceMetrics sourceMetrics;
    private final EngineKvMetrics metrics;
    private final int maxPayloadBytes;
    private final Clock clock;
    private final Duration replayTimeout;
    private final Backoff backoff = Backoff.DEFAULT;

    // Loop-confined.
    private final EngineSequence sequence = new EngineSequence();
    private final EngineBlockMap blocks;
    private final ArrayDeque<Held> held = new ArrayDeque<>();
    private int heldBytes;
    private boolean stopped;
    private @Nullable Channel live;
    private @Nullable Channel replay;
    private @Nullable ScheduledFuture<?> replayDeadline;
    private boolean replaying;
    /** Tells a replay connection that completes late from the current one. */
    private int replayGeneration;
    private int attempts;
    /** The current live connection was refused (its reason is the last error already). */
    private boolean refused;
    private long connectedAtNanos;
    private KvSourceMetrics.@Nullable State state;

    // Read by the admin view.
    private final AtomicLongArray failureCounts = new AtomicLongArray(Failure.values().length);
    private volatile @Nullable Long cursor;
    private volatile long lastEventAtMillis;
    private volatile @Nullable String lastError;
    private volatile long lastErrorAtMillis;
    private volatile KvSourceMetrics.State shownState = KvSourceMetrics.State.CONNECTING;

    private record Held(long seq, byte[] payload) {
    }

    public EngineKvEventSource(KvCacheIndexConfig.Source source, ZmtpConnector connector, EventLoop loop,
                               BackendKvIndex index, KvSourceMetrics sourceMetrics, EngineKvMetrics metrics,
                               int maxBlocks, int maxPayloadBytes, Clock clock, Duration replayTimeout) {
        this.source = source;
        this.zmq = Objects.requireNonNull(source.zmq(), "zmq");
        this.topic = zmq.topic().getBytes(StandardCharsets.UTF_8);
        this.connector = connector;
        this.loop = loop;
        this.index = index;
        this.sourceMetrics = sourceMetrics;
        this.metrics = metrics;
        this.maxPayloadBytes = maxPayloadBytes;
        this.clock = clock;
        this.replayTimeout = replayTimeout;
        this.blocks = new EngineBlockMap(source.backend(), index, maxBlocks);
    }

    @Override
    public KvCacheIndexConfig.Source source() {
        return source;
    }

    @Override
    public void start() {
        loop.execute(this::connect);
    }

    @Override
    public void stop() {
        loop.execute(() -> {
            stopped = true;
            endReplay();
            held.clear();
            heldBytes = 0;
            Channel ch = live;
            live = null;
            if (ch != null) {
                ch.close();
            }
            setState(null);
            blocks.clear();
        });
    }

    @Override
    public KvSourceView view() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Failure f : Failure.values()) {
            counts.put(f.name().toLowerCase(Locale.ROOT), failureCounts.get(f.ordinal()));
        }
        long at = lastEventAtMillis;
        String error = lastError;
        return new KvSourceView(source.backend(), source.transport().yamlName(), shownState.name()
                .toLowerCase(Locale.ROOT), null, null, cursor, index.size(source.backend()),
                at == 0 ? null : Instant.ofEpochMilli(at), error,
                error == null ? null : Instant.ofEpochMilli(lastErrorAtMillis), counts);
    }

    /** The router's hash of a block this source stored under {@code engineHash}, or null (waits for the loop). */
    @Nullable Long routerHash(long engineHash) {
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> blocks.routerHash(engineHash), loop).join();
    }

    /** The sequence number of the last batch consumed; null before the first. */
    public @Nullable Long lastSequence() {
        return cursor;
    }

    private void setState(KvSourceMetrics.@Nullable State next) {
        sourceMetrics.state(state, next);
        state = next;
        if (next != null) {
            shownState = next;
        }
    }

    private void fail(Failure kind, String reason) {
        failureCounts.incrementAndGet(kind.ordinal());
        lastError = LogSafe.escape(reason, KvEventSource.MAX_ERROR_CHARS);
        lastErrorAtMillis = clock.millis();
    }

    // ---- the live PUB connection ----

    private void connect() {
        if (stopped) {
            return;
        }
        setState(KvSourceMetrics.State.CONNECTING);
        refused = false;
        ZmtpSubscriberHandler handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_EVENTS, topic, new LiveListener());
        connector.connect(new ZmtpTarget("", zmq.pub(), zmq.topic()), loop, handler)
                .whenComplete((ch, error) -> loop.execute(() -> connected(ch, error)));
    }

    private void connected(@Nullable Channel ch, @Nullable Throwable error) {
        if (stopped) {
            if (ch != null) {
                ch.close();
            }
            return;
        }
        if (error != null || ch == null) {
            Throwable cause = error != null && error.getCause() != null ? error.getCause() : error;
            fail(Failure.CONNECT, cause instanceof RefusedAddressException ? "connect: address not allowed"
                    : "connect: failed");
            reconnect();
            return;
        }
        live = ch;
        connectedAtNanos = System.nanoTime();
        ch.closeFuture().addListener(f -> loop.execute(() -> ended(ch)));
    }

    private void ended(Channel ch) {
        if (stopped || live != ch) {
            return;
        }
        live = null;
        if (System.nanoTime() - connectedAtNanos >= backoff.resetAfter().toNanos()) {
            attempts = 0;
        }
        if (!refused) {
            lastError = "stream: ended";
            lastErrorAtMillis = clock.millis();
        }
        reconnect();
    }

    private void reconnect() {
        setState(KvSourceMetrics.State.BACKOFF);
        Duration delay = backoff.delay(attempts++, ThreadLocalRandom.current());
        loop.schedule(this::connect, delay.toNanos(), TimeUnit.NANOSECONDS);
    }

    private final class LiveListener implements ZmtpListener {
        @Override
        public void onConnected() {
            setState(KvSourceMetrics.State.CONNECTED);
        }

        @Override
        public void onMessage(ZmtpMessage m) {
            if (stopped) {
                return;
            }
            if (m.parts() != 3 || m.length(1) != 8) {
                metrics.drop(EngineKvMetrics.Drop.BAD_FRAME);
                return;
            }
            long seq = readLong(m.array(), m.offset(1));
            onLive(seq, m.array(), m.offset(2), m.length(2));
        }

        @Override
        public void onRefused(String reason) {
            refused = true;
            fail(Failure.PROTOCOL, "zmtp: " + reason);
        }
    }

    private void onLive(long seq, byte[] array, int offset, int length) {
        if (replaying) {
            if (held.size() < MAX_HELD_BATCHES && (long) heldBytes + length <= MAX_HELD_BYTES) {
                held.add(new Held(seq, java.util.Arrays.copyOfRange(array, offset, offset + length)));
                heldBytes += length;
                return;
            }
            finishReplay(); // gives up: what was held is applied, the rest of the gap clears the backend
        }
        switch (sequence.classify(seq)) {
            case NEXT -> consume(seq, array, offset, length);
            case BEHIND -> {
                // A live stream never repeats itself: the engine restarted with a new cache and new numbers.
                metrics.restart();
                blocks.clear();
                consume(seq, array, offset, length);
            }
            case GAP -> {
                metrics.gap();
                if (zmq.replay() != null && sequence.missing(seq) <= MAX_REPLAY_GAP) {
                    held.add(new Held(seq, java.util.Arrays.copyOfRange(array, offset, offset + length)));
                    heldBytes += length;
                    startReplay(sequence.next());
                } else {
                    metrics.replay(EngineKvMetrics.Replay.UNAVAILABLE);
                    blocks.clear();
                    consume(seq, array, offset, length);
                }
            }
        }
    }

    /** Applies batch {@code seq} (which the caller checked is next, or resyncs to) and moves the sequence past it. */
    private void consume(long seq, byte[] array, int offset, int length) {
        sequence.consumed(seq);
        cursor = seq;
        if (length > maxPayloadBytes) {
            metrics.drop(EngineKvMetrics.Drop.OVERSIZED); // a replay would send the same bytes: move past it
            return;
        }
        EngineKvDecoder.Batch batch = EngineKvDecoder.decode(array, offset, length);
        for (EngineKvDecoder.Drop d : batch.drops()) {
            metrics.drop(EngineKvMetrics.Drop.of(d));
        }
        for (EngineKvDecoder.Event e : batch.events()) {
            switch (e.kind()) {
                case STORED -> {
                    EngineKvMetrics.Drop drop = switch (blocks.stored(e)) {
                        case APPLIED -> null;
                        case NO_TOKENS -> EngineKvMetrics.Drop.NO_TOKENS;
                        case UNKNOWN_PARENT -> EngineKvMetrics.Drop.UNKNOWN_PARENT;
                        case OVER_CAPACITY -> EngineKvMetrics.Drop.OVER_CAPACITY;
                    };
                    if (drop != null) {
                        metrics.drop(drop);
                        continue;
                    }
                }
                case REMOVED -> blocks.removed(e.blockHashes());
                case CLEARED -> blocks.clear();
            }
            metrics.event(e.kind());
        }
        if (!batch.malformed()) {
            lastEventAtMillis = clock.millis();
        }
    }

    // ---- the replay (DEALER to ROUTER) connection ----

    private void startReplay(long from) {
        replaying = true;
        int gen = ++replayGeneration;
        byte[] start = new byte[8];
        for (int i = 0; i < 8; i++) {
            start[i] = (byte) (from >>> (56 - 8 * i));
        }
        ZmtpSubscriberHandler handler = ZmtpSubscriberHandler.dealer(ZmtpLimits.KV_EVENTS,
                new byte[][] {new byte[0], start}, new ReplayListener());
        replayDeadline = loop.schedule(this::finishReplay, replayTimeout.toNanos(), TimeUnit.NANOSECONDS);
        ZmtpTarget target = new ZmtpTarget("", Objects.requireNonNull(zmq.replay()), "");
        connector.connect(target, loop, handler).whenComplete((ch, error) -> loop.execute(() -> {
            if (error != null || ch == null) {
                if (replaying && gen == replayGeneration) {
                    fail(Failure.REPLAY, "replay: cannot connect");
                    finishReplay();
                }
                return;
            }
            if (!replaying || gen != replayGeneration) {
                ch.close(); // the replay ended (timeout, stop) while connecting
                return;
            }
            replay = ch;
            ch.closeFuture().addListener(f -> loop.execute(() -> {
                if (replay == ch) {
                    replay = null;
                    finishReplay(); // closed before its end marker
                }
            }));
        }));
    }

    private final class ReplayListener implements ZmtpListener {
        @Override
        public void onConnected() {
        }

        @Override
        public void onMessage(ZmtpMessage m) {
            if (!replaying) {
                return;
            }
            // [""] [topic] seq payload: the delimiter a DEALER sees, and the topic of later vLLM releases.
            int first = m.parts() > 0 && m.length(0) == 0 ? 1 : 0;
            int n = m.parts() - first;
            if ((n != 2 && n != 3) || m.length(m.parts() - 2) != 8) {
                metrics.drop(EngineKvMetrics.Drop.BAD_FRAME);
                fail(Failure.REPLAY, "replay: bad reply");
                finishReplay();
                return;
            }
            int seqPart = m.parts() - 2;
            long seq = readLong(m.array(), m.offset(seqPart));
            if (seq == END_OF_REPLAY) {
                finishReplay();
                return;
            }
            switch (sequence.classify(seq)) {
                case NEXT -> consume(seq, m.array(), m.offset(seqPart + 1), m.length(seqPart + 1));
                case BEHIND -> metrics.drop(EngineKvMetrics.Drop.DUPLICATE);
                case GAP -> {
                    // The engine no longer keeps the first missing batch.
                    fail(Failure.REPLAY, "replay: gap beyond the engine's buffer");
                    finishReplay();
                }
            }
        }

        @Override
        public void onRefused(String reason) {
            fail(Failure.REPLAY, "replay zmtp: " + reason);
        }
    }

    /** Ends the replay, however it went, and applies what was held; a gap left unfilled clears the backend. */
    private void finishReplay() {
        if (!replaying) {
            return;
        }
        endReplay();
        boolean recovered = true;
        while (!held.isEmpty()) {
            Held h = held.poll();
            switch (sequence.classify(h.seq())) {
                case NEXT -> consume(h.seq(), h.payload(), 0, h.payload().length);
                case BEHIND -> metrics.drop(EngineKvMetrics.Drop.DUPLICATE);
                case GAP -> {
                    recovered = false;
                    blocks.clear();
                    consume(h.seq(), h.payload(), 0, h.payload().length);
                }
            }
        }
        heldBytes = 0;
        metrics.replay(recovered ? EngineKvMetrics.Replay.RECOVERED : EngineKvMetrics.Replay.FAILED);
        if (!recovered) {
            LOG.warn("kv_cache_index source {}: a sequence gap could not be replayed; its blocks were cleared",
                    LogSafe.escape(source.backend()));
        }
    }

    private void endReplay() {
        replaying = false;
        ScheduledFuture<?> deadline = replayDeadline;
        replayDeadline = null;
        if (deadline != null) {
            deadline.cancel(false);
        }
        Channel ch = replay;
        replay = null;
        if (ch != null) {
            ch.close();
        }
    }

    private static long readLong(byte[] a, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (a[at + i] & 0xFF);
        }
        return v;
    }
}
