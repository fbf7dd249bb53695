package dev.continuum.router.proxy.metrics;

/** The {@code side} label of {@code continuum_stream_aborts_total}: who cut a response short. */
public enum StreamSide {
    CLIENT("client"), UPSTREAM("upstream");

    private final String label;

    StreamSide(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
