package dev.continuum.router.proxy.http;

/**
 * The body of a streamed {@link LocalResponse} (server-sent events, say): the server writes the status and headers,
 * then hands {@link #start} a {@link StreamSink} through which the body is written as it is produced.
 */
@FunctionalInterface
public interface StreamedBody {
    /** Called once on the connection's event loop, right after the response head is written; must not block. */
    void start(StreamSink sink);
}
