package dev.continuum.router.eventplane.zmtp;

import java.time.Duration;
import java.util.Objects;

/**
 * Compiled-in bounds of one ZMTP subscription, checked before any buffer is sized from a length read off
 * the wire. A peer that exceeds one is refused: the connection closes and the subscription reconnects with
 * backoff. Buffers grow on demand from {@link #INITIAL_BUFFER_BYTES} by powers of two, never past
 * {@link #maxMessageBytes()}.
 *
 * @param maxFrameBytes         largest message frame accepted (a declared size above it is refused unread)
 * @param maxPartsPerMessage    most frames in one multipart message
 * @param maxMessageBytes       most bytes of all frames of one multipart message together
 * @param maxCommandBytes       largest command frame (READY, PING, ...) accepted
 * @param maxMetadataProperties most properties in the peer's READY metadata
 * @param handshakeTimeout      greeting plus READY must complete within this (a slow greeting is refused)
 */
public record ZmtpLimits(
        int maxFrameBytes,
        int maxPartsPerMessage,
        int maxMessageBytes,
        int maxCommandBytes,
        int maxMetadataProperties,
        Duration handshakeTimeout) {

    /** ZMTP 3.x greetings are exactly this long (signature 10, version 2, mechanism 20, as-server 1, filler 31). */
    public static final int GREETING_BYTES = 64;
    /** Every subscription's assembly buffer starts here and returns here after a larger message. */
    public static final int INITIAL_BUFFER_BYTES = 512;
    /** The socket read buffer (Netty's fixed receive allocation): allocated per read, released after it. */
    public static final int READ_BUFFER_BYTES = 2048;
    /** The largest single write a subscription makes (its greeting). */
    public static final int WRITE_BUFFER_BYTES = 64;
    /** 2,624 bytes per idle subscription (docs/decisions.md): assembly buffer, read buffer and write buffer. */
    public static final int IDLE_SUBSCRIPTION_BUFFER_BYTES = INITIAL_BUFFER_BYTES + READ_BUFFER_BYTES
            + WRITE_BUFFER_BYTES;
    /** READY metadata and PING contexts are small; libzmq's READY with every option set is well under this. */
    public static final int MAX_COMMAND_BYTES = 4096;
    public static final int MAX_METADATA_PROPERTIES = 32;
    /** DirectTcpConnector.CONNECT_TIMEOUT bounds resolution plus connect; the handshake gets the same budget. */
    public static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(10);

    /**
     * kv_metrics: one ActiveLoad per message, a payload of at most 16 KiB (larger payloads are dropped as
     * {@code oversized} without parsing, which needs the frame read whole), so frames up to 64 KiB are read
     * and anything larger is refused.
     */
    public static final ZmtpLimits KV_METRICS = new ZmtpLimits(64 * 1024, 8, 128 * 1024, MAX_COMMAND_BYTES,
            MAX_METADATA_PROPERTIES, HANDSHAKE_TIMEOUT);

    /** kv-events: 1 MiB per frame, to fit batches of up to 128 events or 8192 blocks (docs/decisions.md). */
    public static final ZmtpLimits KV_EVENTS = new ZmtpLimits(1024 * 1024, 8, 1024 * 1024 + 64 * 1024,
            MAX_COMMAND_BYTES, MAX_METADATA_PROPERTIES, HANDSHAKE_TIMEOUT);

    public ZmtpLimits {
        Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
        if (maxFrameBytes < INITIAL_BUFFER_BYTES) {
            throw new IllegalArgumentException("maxFrameBytes: " + maxFrameBytes + " (expected: >= "
                    + INITIAL_BUFFER_BYTES + ")");
        }
        if (maxMessageBytes < maxFrameBytes) {
            throw new IllegalArgumentException("maxMessageBytes: " + maxMessageBytes + " (expected: >= maxFrameBytes "
                    + maxFrameBytes + ")");
        }
        if (maxPartsPerMessage < 1 || maxPartsPerMessage > 64) {
            throw new IllegalArgumentException("maxPartsPerMessage: " + maxPartsPerMessage + " (expected: 1..64)");
        }
        if (maxCommandBytes < GREETING_BYTES || maxCommandBytes > maxMessageBytes) {
            throw new IllegalArgumentException("maxCommandBytes: " + maxCommandBytes + " (expected: "
                    + GREETING_BYTES + "..maxMessageBytes)");
        }
        if (maxMetadataProperties < 1) {
            throw new IllegalArgumentException("maxMetadataProperties: " + maxMetadataProperties
                    + " (expected: >= 1)");
        }
        if (handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout: " + handshakeTimeout + " (expected: > 0)");
        }
    }

    /** The same bounds with another handshake deadline (tests of slow peers). */
    public ZmtpLimits withHandshakeTimeout(Duration timeout) {
        return new ZmtpLimits(maxFrameBytes, maxPartsPerMessage, maxMessageBytes, maxCommandBytes,
                maxMetadataProperties, timeout);
    }
}
