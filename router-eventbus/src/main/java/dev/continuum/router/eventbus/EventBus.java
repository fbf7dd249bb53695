package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BusRole;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command API over the listener's sessions: opens data streams on the right session and tells waiters when
 * sessions change. It outlives listener restarts: {@link EventBusSupervisor} attaches each new listener's
 * sessions, and while none is attached nothing is covered.
 *
 * <p>Placement: {@link #openStream} ranks the live, non-draining broker sessions that declared the target's
 * namespace by {@link Rendezvous} weight and uses the first one below its stream cap;
 * {@link #openAnnouncedStream} uses the kv_listener session granted the backend that carries the fewest streams.
 */
public final class EventBus {
    private static final Logger LOG = LoggerFactory.getLogger(EventBus.class);
    /** From {@code subscribe} to the arrival of the data stream (the client dials the upstream meanwhile). */
    public static final Duration OPEN_TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern SAFE_CODE = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

    private final Duration openTimeout;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private final Runnable relay = this::changed;
    private volatile @Nullable BusSessions sessions;

    public EventBus() {
        this(OPEN_TIMEOUT);
    }

    /** With another open timeout (tests observe it in milliseconds). */
    public EventBus(Duration openTimeout) {
        this.openTimeout = openTimeout;
    }

    /** Serves the sessions of a started listener (replacing any before). */
    public void attach(BusSessions next) {
        BusSessions before = sessions;
        if (before != null) {
            before.removeListener(relay);
        }
        next.addListener(relay);
        sessions = next;
        changed();
    }

    /** The listener stopped: nothing is covered until the next attach. */
    public void detach() {
        BusSessions before = sessions;
        sessions = null;
        if (before != null) {
            before.removeListener(relay);
        }
        changed();
    }

    private void changed() {
        for (Runnable listener : listeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                LOG.warn("event bus session-change listener failed", e);
            }
        }
    }

    /**
     * Calls {@code onChange} after every change of the sessions (welcomed, ended, draining, listener restarted),
     * on a listener thread; it must not block. Close the result to stop.
     */
    public AutoCloseable onSessionsChanged(Runnable onChange) {
        listeners.add(onChange);
        return () -> listeners.remove(onChange);
    }

    /** Whether a listener is running (attached); without one nothing can ever be covered. */
    public boolean listening() {
        return sessions != null;
    }

    /** Whether a live, non-draining broker session declared {@code namespace}. */
    public boolean covers(String namespace) {
        BusSessions s = sessions;
        return s != null && s.covers(namespace);
    }

    public Set<String> coveredNamespaces() {
        BusSessions s = sessions;
        return s == null ? Set.of() : s.coveredNamespaces();
    }

    /** Live sessions (oldest first); empty while no listener runs. */
    public List<BusSession> sessions() {
        BusSessions s = sessions;
        return s == null ? List.of() : s.sessions();
    }

    /**
     * Completes once {@link #covers}{@code (namespace)}: at once when it does now, else on the session change
     * that makes it so, without polling. Cancel it to stop waiting.
     */
    public CompletableFuture<Void> awaitCoverage(String namespace) {
        if (covers(namespace)) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> covered = new CompletableFuture<>();
        Runnable check = () -> {
            if (covers(namespace)) {
                covered.complete(null);
            }
        };
        listeners.add(check);
        covered.whenComplete((v, e) -> listeners.remove(check));
        check.run(); // a session welcomed between the first look and the registration
        return covered;
    }

    /** Opens a stream to a ZMQ publisher through the highest-ranked broker session covering its namespace. */
    public CompletableFuture<BusStream> openStream(SubscribeTarget.ZmqTcp target, String topic) {
        List<BusSession> covering = new ArrayList<>();
        for (BusSession s : sessions()) {
            if (s.role() == BusRole.BROKER && s.isLive() && !s.isDraining()
                    && s.namespaces().contains(target.namespace())) {
                covering.add(s);
            }
        }
        return open(Rendezvous.rank(covering, Rendezvous.key(target, topic)), target, topic);
    }

    /** Opens a backend's SSE KV-event stream through the least-loaded kv_listener session that announced it. */
    public CompletableFuture<BusStream> openAnnouncedStream(String backend, @Nullable Long lastEventId) {
        List<BusSession> granted = new ArrayList<>();
        for (BusSession s : sessions()) {
            if (s.role() == BusRole.KV_LISTENER && s.isLive() && !s.isDraining() && s.backends().contains(backend)) {
                granted.add(s);
            }
        }
        granted.sort(java.util.Comparator.comparingInt(BusSession::streamCount));
        return open(granted, new SubscribeTarget.AnnouncedSource(backend, lastEventId), "");
    }

    private CompletableFuture<BusStream> open(List<BusSession> ranked, SubscribeTarget target, String topic) {
        if (ranked.isEmpty()) {
            return CompletableFuture.failedFuture(new BusStreamException(BusStreamException.Reason.NO_SESSION, ""));
        }
        BusStreamException last = new BusStreamException(BusStreamException.Reason.NO_SESSION, "");
        for (BusSession session : ranked) {
            Opening opening = new Opening();
            try {
                session.subscribe(target, topic, opening);
            } catch (BusCommandException e) {
                last = new BusStreamException(e.reason() == BusCommandException.Reason.TOO_MANY_STREAMS
                        ? BusStreamException.Reason.TOO_MANY_STREAMS : BusStreamException.Reason.NO_SESSION, "");
                continue;
            }
            opening.armTimeout(session, openTimeout);
            return opening.result;
        }
        return CompletableFuture.failedFuture(last);
    }

    /** One command waiting for its data stream; the acceptor the session hands the stream (or its end) to. */
    private static final class Opening implements StreamAcceptor {
        final CompletableFuture<BusStream> result = new CompletableFuture<>();
        volatile @Nullable CommandedStream command;

        void armTimeout(BusSession session, Duration timeout) {
            var timer = session.control().eventLoop().schedule(() -> {
                if (!result.isDone()) {
                    fail(BusStreamException.Reason.OPEN_TIMEOUT, "");
                }
            }, timeout.toNanos(), TimeUnit.NANOSECONDS);
            // A caller that gives up (its subscription stopped) takes the command back.
            result.whenComplete((stream, error) -> {
                timer.cancel(false);
                if (error != null) {
                    CommandedStream c = command;
                    if (c != null) {
                        c.unsubscribe();
                    }
                }
            });
        }

        private void fail(BusStreamException.Reason reason, String code) {
            result.completeExceptionally(new BusStreamException(reason, code));
        }

        @Override
        public void commanded(CommandedStream stream) {
            command = stream;
        }

        @Override
        public void opened(io.netty.channel.Channel stream) {
            CommandedStream c = command;
            if (c == null || !result.complete(new BusStream(stream, c.session().entryId(), c))) {
                stream.close(); // gave up meanwhile
            }
        }

        @Override
        public void closed(String code, String message) {
            if (code.equals("session_closed")) {
                fail(BusStreamException.Reason.SESSION_CLOSED, "");
            } else {
                fail(BusStreamException.Reason.REFUSED, SAFE_CODE.matcher(code).matches() ? code : "invalid_code");
            }
        }
    }
}
