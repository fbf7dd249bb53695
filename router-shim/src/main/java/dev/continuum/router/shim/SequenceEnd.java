package dev.continuum.router.shim;

/** Why an active sequence stopped counting. */
public enum SequenceEnd {
    /** The response reached the client whole. */
    COMPLETED("completed"),
    /** The client went away, or the request ended before any plan backend was tried. */
    CANCELLED("cancelled"),
    /** A retry or a fallback took the request elsewhere (a new plan, or standard routing). */
    MOVED("moved"),
    /** The plan's path failed or the upstream refused the pin. */
    FAILED("failed"),
    /** It outlived {@link ActiveSequences#MAX_LIFETIME}: an answer that never ended is not kept. */
    EXPIRED("lifetime"),
    /** Its worker left the fleet. */
    WORKER_LEFT("worker_left");

    static final SequenceEnd[] VALUES = values();

    private final String label;

    SequenceEnd(String label) {
        this.label = label;
    }

    /** The metric label and log word. */
    public String label() {
        return label;
    }
}
