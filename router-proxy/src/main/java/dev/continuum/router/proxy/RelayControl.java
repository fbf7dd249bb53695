package dev.continuum.router.proxy;

/**
 * What the ingress tells a running proxy exchange about its client connection. Called on the
 * client connection's event loop.
 */
public interface RelayControl {
    /** No-op control for exchanges that are already finished. */
    RelayControl NONE = new RelayControl() {
        @Override
        public void clientWritabilityChanged() {
        }

        @Override
        public void clientClosed() {
        }
    };

    /** The client channel's writability changed: a relay paused for backpressure may resume. */
    void clientWritabilityChanged();

    /**
     * The client connection closed before the response ended: the exchange stops, its upstream
     * connection is closed (never pooled), and it calls nothing back on the ingress afterwards.
     */
    void clientClosed();
}
