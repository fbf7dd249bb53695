package dev.continuum.router.eventplane.nats;

import java.util.Locale;

/** The shared NATS connection's state, a closed label of {@code continuum_nats_connection_state}. */
public enum NatsConnectionState {
    /** No servers are configured. */
    OFF,
    /** Connecting, or reconnecting after a loss. */
    CONNECTING,
    CONNECTED;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }
}
