package dev.continuum.router.eventbus;

import io.netty.channel.Channel;

/**
 * Who receives a commanded data stream. {@link EventBus} implements it to run its ZMTP or SSE
 * consumer over the stream's bytes.
 */
public interface StreamAcceptor {
    /** The command exists and is about to be sent: called before the data stream can arrive. */
    default void commanded(CommandedStream stream) {
    }

    /**
     * The client opened the stream and got its 200. Called on {@code stream}'s event loop with the HTTP/2
     * child channel, whose pipeline is empty: the acceptor adds its handlers, which receive
     * {@code Http2DataFrame}s (and release them) and may write {@code Http2DataFrame}s back.
     */
    void opened(Channel stream);

    /** The stream will not open, or its open stream was taken down by the session; {@code code} says why. */
    void closed(String code, String message);
}
