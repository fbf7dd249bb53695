package dev.continuum.router.eventbus;

import io.netty.channel.Channel;

/**
 * An open data stream: the HTTP/2 child channel that carries the upstream's bytes, the broker entry whose
 * session carries it, and the command behind it. Closing it sends {@code unsubscribe} and resets the stream.
 *
 * @param channel  the stream's child channel, on its connection's event loop; its pipeline is the caller's
 * @param brokerId the {@code brokers[].id} of the carrying session (configuration, safe to show)
 */
public record BusStream(Channel channel, String brokerId, CommandedStream command) {
    /** Whether the carrier went away: the session ended or drains, or its connection closed. */
    public boolean carrierLost() {
        Channel connection = channel.parent();
        BusSession session = command.session();
        return !session.isLive() || session.isDraining() || (connection != null && !connection.isActive());
    }

    public void close() {
        command.unsubscribe();
    }
}
