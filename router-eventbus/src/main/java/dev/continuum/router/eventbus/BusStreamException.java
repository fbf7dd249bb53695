package dev.continuum.router.eventbus;

/**
 * Why {@link EventBus} could not open a stream. The message names only the reason and, for a refusal, the
 * client's error code: never a host, port or the client's free-text message, since it reaches logs that
 * leave the cluster.
 */
public final class BusStreamException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The closed set of reasons. */
    public enum Reason {
        /** No live, non-draining session covers the target. */
        NO_SESSION,
        /** Every covering session is at {@code max_streams_per_session}. */
        TOO_MANY_STREAMS,
        /** The client answered {@code stream_closed} (its code is in the message). */
        REFUSED,
        /** No data stream arrived within {@link EventBus#OPEN_TIMEOUT}. */
        OPEN_TIMEOUT,
        /** The session ended before the data stream arrived. */
        SESSION_CLOSED
    }

    private final Reason reason;
    private final String code;

    public BusStreamException(Reason reason, String code) {
        super(reason.name().toLowerCase(java.util.Locale.ROOT) + (code.isEmpty() ? "" : ": " + code));
        this.reason = reason;
        this.code = code;
    }

    public Reason reason() {
        return reason;
    }

    /** The client's {@code stream_closed} code for {@link Reason#REFUSED} (or the session's end), else empty. */
    public String code() {
        return code;
    }
}
