package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.StatusClass;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpRequest;
import java.io.IOException;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * One try of one backend: the breaker permit, the upstream connection, the attempt's timeout and the
 * one stale-connection retry. A retry or fallback makes a new attempt, so nothing carries over from a
 * failed one, and a late answer to an old attempt's connect (it is the pool's callback) is recognised as
 * such. Every method runs on the client's event loop; the permit is settled exactly once (judged
 * by {@link #failed} or {@link #answered}, or returned by {@link #abandon}).
 */
final class Attempt implements UpstreamPool.AcquireCallback {
    /** What an attempt asks of, and tells, its exchange; every call names the attempt, so a stale one is told apart. */
    interface Events extends UpstreamListener {
        /** Whether {@code attempt} is still the exchange's current one (the exchange has not finished). */
        boolean current(Attempt attempt);

        /** The request to write on the attempt's connection. */
        FullHttpRequest upstreamRequest(Attempt attempt);

        /** The attempt could not deliver its request (connect or write failure): nothing reached the upstream. */
        void onConnectFailed(Attempt attempt, Throwable cause);
    }

    final Backend backend;
    private final Events events;
    private final EventLoop loop;
    /** Monotonic nanoseconds when the attempt started (head latency). */
    final long startNanos;
    private long permit;
    private @Nullable Channel upstream;
    private boolean reused;
    private boolean staleRetried;
    private boolean requestWritten;
    private @Nullable Future<?> timeout;
    private boolean inFlight;

    Attempt(Backend backend, long permit, long startNanos, EventLoop loop, Events events) {
        this.backend = backend;
        this.events = events;
        this.loop = loop;
        this.permit = permit;
        this.startNanos = startNanos;
        backend.resources().inFlight.incrementAndGet();
        this.inFlight = true;
    }

    /** The attempt no longer occupies its backend (for the load-aware selectors); idempotent. */
    void leave() {
        if (inFlight) {
            inFlight = false;
            backend.resources().inFlight.decrementAndGet();
        }
    }

    /** Takes a connection from the backend's pool (or a fresh one) and sends the request on it. */
    void connect() {
        backend.resources().pool.acquire(loop, this);
    }

    @Override
    public void onAcquired(Channel ch, boolean pooled) {
        if (!events.current(this)) {
            // The attempt ended while connecting (client left, timeout): keep the clean connection.
            backend.resources().pool.release(ch);
            return;
        }
        upstream = ch;
        reused = pooled;
        ch.pipeline().get(UpstreamHandler.class).attach(events);
        ch.config().setAutoRead(true);
        ch.writeAndFlush(events.upstreamRequest(this)).addListener(f -> onWritten(ch, f.isSuccess(), f.cause()));
    }

    private void onWritten(Channel ch, boolean success, @Nullable Throwable cause) {
        if (ch != upstream || !events.current(this)) {
            return;
        }
        if (success) {
            requestWritten = true;
            return;
        }
        // Nothing reached the upstream: safe to try again.
        dropUpstream();
        if (!reconnectIfStale()) {
            events.onConnectFailed(this, cause != null ? cause : new IOException("request write failed"));
        }
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        if (events.current(this)) {
            events.onConnectFailed(this, cause);
        }
    }

    /**
     * A pooled connection failed before it carried this request (the upstream had given up on it): one fresh
     * connection to the same backend, uncounted, at most once per attempt. False when that was not the case.
     */
    boolean reconnectIfStale() {
        if (reused && !staleRetried) {
            staleRetried = true;
            backend.resources().pool.connect(loop, this);
            return true;
        }
        return false;
    }

    /** The attempt's armed timer ({@link RequestTimeouts}); it is cancelled when the attempt ends. */
    void timeout(Future<?> t) {
        cancelTimeout();
        timeout = t;
    }

    void cancelTimeout() {
        Future<?> t = timeout;
        if (t != null) {
            t.cancel(false);
            timeout = null;
        }
    }

    /** The timeout fired: it needs no cancelling any more. */
    void timeoutFired() {
        timeout = null;
    }

    @Nullable Channel upstream() {
        return upstream;
    }

    boolean wasRequestWritten() {
        return requestWritten;
    }

    /** The backend failed this attempt before a response head: the breaker and the error meter hear it. */
    void failed() {
        backend.resources().breaker.onFailure(permit);
        permit = CircuitBreaker.NO_PERMIT;
        backend.resources().meters.request(StatusClass.ERROR);
    }

    /** A response head arrived: head latency, status class, and the breaker's verdict (5xx fails). */
    void answered(int code, long nowNanos) {
        BackendResources r = backend.resources();
        r.meters.headLatency(nowNanos - startNanos);
        r.recordLatency(nowNanos - startNanos);
        r.meters.request(StatusClass.of(code));
        if (code >= 500) {
            r.breaker.onFailure(permit);
        } else {
            r.breaker.onSuccess(permit);
        }
        permit = CircuitBreaker.NO_PERMIT;
    }

    /** Forgets the connection without closing it (the caller closes or pools it). */
    @Nullable Channel takeUpstream() {
        Channel u = upstream;
        upstream = null;
        return u;
    }

    /** Closes the connection (never pooled: its answer is unread or unfinished), if any. */
    void dropUpstream() {
        leave();
        Channel u = takeUpstream();
        if (u != null) {
            detach(u);
        }
    }

    /** The answer was read to its end: pool the connection when the upstream keeps it alive, else close it. */
    void releaseUpstream(boolean keepAlive) {
        leave();
        Channel u = takeUpstream();
        if (u != null) {
            if (keepAlive) {
                backend.resources().pool.release(u);
            } else {
                detach(u);
            }
        }
    }

    /** Ends the attempt without judging the backend: the connection is closed, the permit returned unused. */
    void abandon() {
        leave();
        cancelTimeout();
        dropUpstream();
        if (permit != CircuitBreaker.NO_PERMIT) {
            backend.resources().breaker.onIgnored(permit);
            permit = CircuitBreaker.NO_PERMIT;
        }
    }

    static void detach(Channel u) {
        UpstreamHandler h = u.pipeline().get(UpstreamHandler.class);
        if (h != null) {
            h.detach();
        }
        u.close();
    }
}
