package dev.continuum.router.discovery.etcd;

/** A range get that failed, classified for the caller. */
public final class EtcdReadException extends Exception {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Kind {
        /** A response exceeded the client's inbound message limit. */
        TOO_LARGE,
        /** The revision asked for was compacted. */
        COMPACTED,
        /** No answer within the time allowed. */
        TIMEOUT,
        /** Anything else: unreachable, refused, permission denied. */
        FAILED
    }

    private final Kind kind;

    public EtcdReadException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
