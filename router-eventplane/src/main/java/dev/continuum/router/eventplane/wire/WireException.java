package dev.continuum.router.eventplane.wire;

/**
 * A drop decided deep inside a decoder. Stackless: fleet input can produce one per message, and a drop is
 * an expected outcome, not a bug to trace. Thrown by the event plane's cursor and by each channel family's payload
 * decoder built on it; it never escapes a decoder, which turns it into a counted drop.
 */
public final class WireException extends Exception {
    private static final long serialVersionUID = 1L;

    private final EventDrop drop;
    private final String detail;

    public WireException(EventDrop drop, String detail) {
        super(detail, null, false, false);
        this.drop = drop;
        this.detail = detail;
    }

    /** The counted reason of the drop. */
    public EventDrop drop() {
        return drop;
    }

    /** Never null: every one is built with the detail the drop is logged with. */
    @Override
    public String getMessage() {
        return detail;
    }

    public static WireException malformed(String detail) {
        return new WireException(EventDrop.MALFORMED, detail);
    }
}
