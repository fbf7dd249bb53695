package dev.continuum.router.eventbus;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One TCP connection's admission state: the handshake and auth deadlines, the client certificate once
 * verified, and the count of accepted requests that keeps it open. Only the connection's event loop touches
 * it (HTTP/2 child channels share their parent's loop), so it needs no synchronization.
 */
final class BusConnection {
    static final AttributeKey<BusConnection> KEY = AttributeKey.valueOf(BusConnection.class, "connection");

    private final Channel channel;
    private final ListenerTimings timings;
    private final BusMetrics metrics;
    private @Nullable ScheduledFuture<?> handshakeDeadline;
    private @Nullable ScheduledFuture<?> authDeadline;
    private @Nullable ScheduledFuture<?> lingerClose;
    private @Nullable CertIdentity certificate;
    private boolean tlsDone;
    private int acceptedOpen;

    BusConnection(Channel channel, ListenerTimings timings, BusMetrics metrics) {
        this.channel = channel;
        this.timings = timings;
        this.metrics = metrics;
    }

    static BusConnection of(Channel channel) {
        Channel parent = channel.parent();
        Channel root = channel instanceof io.netty.handler.codec.http2.Http2StreamChannel && parent != null
                ? parent : channel;
        BusConnection connection = root.attr(KEY).get();
        if (connection == null) {
            throw new IllegalStateException("no BusConnection on " + root);
        }
        return connection;
    }

    /** Starts both deadlines at accept: a client that sends nothing is still gone after the handshake timeout. */
    void accepted() {
        handshakeDeadline = schedule(() -> {
            if (!tlsDone) {
                closeWith(BusErrorCode.HANDSHAKE_TIMEOUT);
            }
        }, timings.handshake().toNanos());
        authDeadline = schedule(() -> closeWith(BusErrorCode.AUTH_TIMEOUT), timings.auth().toNanos());
    }

    void tlsDone(@Nullable CertIdentity verified) {
        tlsDone = true;
        certificate = verified;
        cancel(handshakeDeadline);
    }

    @Nullable CertIdentity certificate() {
        return certificate;
    }

    /** A request got its 2xx: the connection has proven itself, and stays while a request is open. */
    void requestAccepted(Channel stream) {
        cancel(authDeadline);
        authDeadline = null;
        cancel(lingerClose);
        lingerClose = null;
        acceptedOpen++;
        stream.closeFuture().addListener(f -> requestEnded());
    }

    private void requestEnded() {
        acceptedOpen--;
        if (acceptedOpen == 0 && channel.isActive()) {
            lingerClose = schedule(() -> channel.close(), timings.linger().toNanos());
        }
    }

    void closeWith(BusErrorCode code) {
        if (channel.isActive()) {
            metrics.refused(code);
            channel.close();
        }
    }

    void closed() {
        cancel(handshakeDeadline);
        cancel(authDeadline);
        cancel(lingerClose);
    }

    private ScheduledFuture<?> schedule(Runnable task, long nanos) {
        return channel.eventLoop().schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    private static void cancel(@Nullable ScheduledFuture<?> future) {
        if (future != null) {
            future.cancel(false);
        }
    }
}
