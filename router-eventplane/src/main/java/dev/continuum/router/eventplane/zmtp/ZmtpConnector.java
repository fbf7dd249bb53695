package dev.continuum.router.eventplane.zmtp;

import dev.continuum.router.eventplane.Transport;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Opens the byte stream a ZMTP subscription runs over: a direct TCP connection ({@link DirectTcpConnector})
 * or, with the event bus, a broker stream. The ZMTP handshake, bounds and decoding always run in the
 * router over the bytes the connector delivers, whatever carries them.
 */
public interface ZmtpConnector extends AutoCloseable {
    Transport transport();

    /**
     * Connects to {@code target} on {@code loop} with {@code handler} as the channel's pipeline. The future
     * completes with the active channel, or fails ({@link RefusedAddressException} when policy forbade the
     * address; any other exception for an ordinary failure such as a timeout or a refused connection).
     * Cancelling the future abandons the attempt (a channel that connects afterwards is closed).
     */
    CompletableFuture<Channel> connect(ZmtpTarget target, EventLoop loop, ChannelHandler handler);

    /**
     * Completes when {@link #connect} could be tried for {@code target}: at once for a direct dial; for a broker,
     * when a session covers the target's namespace. Until then the subscription is {@code pending} and waits
     * without polling. Cancelling the future stops the wait.
     */
    default CompletableFuture<Void> reachable(ZmtpTarget target) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Whether {@code channel}, a channel this connector made that has closed, closed because its carrier went
     * away (a broker session ended or is draining) rather than the publisher. The subscription then retries at
     * the reconnect floor, on another carrier, instead of backing off. A broker channel may run on the bus
     * connection's event loop rather than the one passed to {@link #connect}; its close still reaches the
     * subscription through the channel's close future.
     */
    default boolean carrierLost(Channel channel) {
        return false;
    }

    /** Who carries {@code channel} for the admin view (a broker's configured id), or null for a direct dial. */
    default @Nullable String carrierOf(Channel channel) {
        return null;
    }

    /** Releases what the connector owns (resolver threads); open channels stay with their owners. */
    @Override
    void close();
}
