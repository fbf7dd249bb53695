package dev.continuum.router.eventplane.nats;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;

/**
 * What the shared {@link NatsConnection} tells one subscriber about the connection: calls come from the NATS
 * client's threads or the connection's own thread, never concurrently for one tap.
 */
public interface NatsTap {
    /**
     * A connection (a first one, or a new one after a settings change) is up: subscribe on its shared
     * dispatcher (one thread per connection, whatever the number of subscriptions), on {@code connection}.
     */
    void attach(Connection connection, Dispatcher dispatcher);

    /** The connection went away (the client reconnects by itself): what is published meanwhile is not seen. */
    void lost();

    /** The client reconnected and resubscribed by itself after {@link #lost}. */
    void resumed();

    /** NATS is off now (no servers configured, or the process stops): nothing will arrive. */
    void detached();
}
