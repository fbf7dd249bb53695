package dev.continuum.router.eventplane.zmtp;

/**
 * The resolved address of a publisher is outside {@code dynamo.load.direct_allow_cidrs}; nothing was
 * dialed. The message names neither the host nor the address.
 */
public final class RefusedAddressException extends Exception {
    private static final long serialVersionUID = 1L;

    public RefusedAddressException(String message) {
        super(message, null, false, false);
    }
}
