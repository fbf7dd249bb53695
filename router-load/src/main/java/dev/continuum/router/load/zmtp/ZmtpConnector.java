package dev.continuum.router.load.zmtp;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import java.util.concurrent.CompletableFuture;

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

    /** Releases what the connector owns (resolver threads); open channels stay with their owners. */
    @Override
    void close();
}
