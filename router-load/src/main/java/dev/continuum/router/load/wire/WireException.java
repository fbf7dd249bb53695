package dev.continuum.router.load.wire;

/**
 * A drop decided deep inside a decoder. Stackless: fleet input can produce one per message, and a drop is
 * an expected outcome, not a bug to trace. Never escapes this package.
 */
final class WireException extends Exception {
    private static final long serialVersionUID = 1L;

    final EventDrop drop;
    private final String detail;

    WireException(EventDrop drop, String detail) {
        super(detail, null, false, false);
        this.drop = drop;
        this.detail = detail;
    }

    /** Never null: every one is built with the detail the drop is logged with. */
    @Override
    public String getMessage() {
        return detail;
    }

    static WireException malformed(String detail) {
        return new WireException(EventDrop.MALFORMED, detail);
    }
}
