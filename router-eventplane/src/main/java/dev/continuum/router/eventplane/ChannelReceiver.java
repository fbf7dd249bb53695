package dev.continuum.router.eventplane;

import dev.continuum.router.eventplane.zmtp.ZmtpMessage;

/**
 * What one event-channel subscription delivers to, confined to the subscription's event loop (calls never
 * overlap and arrive in order). The kv_metrics receiver applies samples to the load store; the kv-events
 * receiver hands messages to the KV index.
 */
public interface ChannelReceiver {
    /** A connection completed its handshake and subscribed: whatever changed while disconnected is unknown. */
    void onConnected();

    /**
     * The connection {@link #onConnected} announced ended, and the subscription reconnects (with backoff, or
     * pending until a broker covers the publisher again). Not called when the subscription stops: that is
     * {@link #onStopped}.
     */
    default void onDisconnected() {
    }

    /** One whole message; the view is valid only during this call. */
    void onMessage(ZmtpMessage message);

    /** The dial policy refused the address, or the peer broke the protocol or a bound (counted, not logged). */
    void onTransportRefused();

    /**
     * The subscription stopped for good. {@code departed}: its publisher left discovery (what it delivered
     * goes with it); otherwise it is being restarted (a transport switch) and the next connect decides.
     */
    void onStopped(boolean departed);
}
