package dev.continuum.router.proxy;

/**
 * Receives what happens on an upstream connection while an exchange owns it. Called on the
 * connection's event loop. {@link #onUpstreamMessage} transfers ownership of {@code msg}: the
 * listener releases it or writes it on.
 */
interface UpstreamListener {
    void onUpstreamMessage(Object msg);

    void onUpstreamReadComplete();

    void onUpstreamClosed();

    void onUpstreamError(Throwable cause);

    /** Nothing was read or written on the connection for the idle timeout. */
    void onUpstreamIdle();
}
