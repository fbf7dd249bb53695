package dev.continuum.router.eventplane.zmtp;

/** What one SUB connection reports, always on its channel's event loop, in order. */
public interface ZmtpListener {
    /** The handshake completed (greeting, READY both ways) and the subscription was sent. */
    void onConnected();

    /** A whole multipart message arrived; the view is valid only during this call. */
    void onMessage(ZmtpMessage message);

    /**
     * The peer broke the protocol or a bound ({@code reason} names which, without peer bytes or addresses);
     * the connection is being closed. Called at most once, never after a plain disconnect.
     */
    void onRefused(String reason);
}
