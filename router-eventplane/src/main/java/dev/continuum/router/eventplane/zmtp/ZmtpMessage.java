package dev.continuum.router.eventplane.zmtp;

/**
 * One received multipart message, as a view into the subscription's assembly buffer. Valid only during
 * {@link ZmtpListener#onMessage}: the buffer is reused for the next message, so copy what you keep.
 */
public interface ZmtpMessage {
    int parts();

    /** The array that holds every part; read {@code [offset(i), offset(i) + length(i))}. */
    byte[] array();

    int offset(int part);

    int length(int part);
}
