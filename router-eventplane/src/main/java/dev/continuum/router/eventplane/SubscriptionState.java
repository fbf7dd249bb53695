package dev.continuum.router.eventplane;

import java.util.Locale;

/** A subscription's state, as the admin API and {@code continuum_dynamo_load_subscriptions{state}} show it. */
public enum SubscriptionState {
    /** Waiting for a carrier: under {@code transport: broker} with no event bus, it stays here. */
    PENDING,
    /** Resolving, dialing or in the ZMTP handshake. */
    CONNECTING,
    /** Handshake done and subscribed: samples flow. */
    CONNECTED,
    /** Waiting out a reconnect delay after a failure, a refusal or a disconnect. */
    BACKOFF;

    private final String label = name().toLowerCase(Locale.ROOT);

    public String label() {
        return label;
    }
}
