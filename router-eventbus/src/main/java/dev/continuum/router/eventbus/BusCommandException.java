package dev.continuum.router.eventbus;

/** A {@code subscribe} the session cannot send; {@link #reason()} says why, for the caller to pick another session. */
public final class BusCommandException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a command was not sent. */
    public enum Reason {
        SESSION_CLOSED,
        DRAINING,
        TOO_MANY_STREAMS,
        WRONG_TARGET
    }

    private final Reason reason;

    BusCommandException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
