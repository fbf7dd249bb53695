package dev.continuum.router.proxy.http;

/**
 * Where a {@link StreamedBody} writes. Safe to call from any thread. Bounded: a chunk offered while the client is not
 * reading (the channel is unwritable, or earlier chunks are still queued for the event loop) is dropped and
 * {@link #offer} answers false, so a slow client costs frames, never memory. The producer coalesces: it offers the
 * latest state next time.
 */
public interface StreamSink {
    /** Queues {@code chunk} for the client; false when it was dropped (slow client) or the stream has ended. */
    boolean offer(byte[] chunk);

    /** Ends the response (and the connection); idempotent. */
    void end();

    /** False once the stream ended: by {@link #end}, the client closing, or the server shutting down. */
    boolean open();

    /** Runs {@code onEnd} once when the stream ends, whoever ends it (at once if it already has). */
    void whenEnded(Runnable onEnd);
}
