package dev.continuum.router.proxy.http;

import java.time.Duration;

/**
 * Compiled-in bounds of the ingress that configuration does not set.
 *
 * @param maxPipelinedRequests requests read ahead while one is in flight on a connection; reading
 *                             pauses beyond it (HTTP/1.1 pipelining is answered in order)
 * @param lingerTime           after an early answer (a refusal while the request may still be arriving)
 *                             the longest the server keeps reading and discarding the rest of it before it
 *                             closes: closing at once with unread input makes the kernel reset the
 *                             connection, and the client would lose the answer ({@link LingeringClose})
 * @param lingerBytes          the most bytes discarded that way; the drain allows at least
 *                             {@code max_request_body_size}, so any refused body within the limit can finish
 * @param writeBufferLowWaterMark  client write buffer size under which a paused relay resumes
 * @param writeBufferHighWaterMark client write buffer size over which a relay pauses its upstream
 */
public record IngressLimits(int maxPipelinedRequests, Duration lingerTime, long lingerBytes,
                            int writeBufferLowWaterMark, int writeBufferHighWaterMark) {
    public static final IngressLimits DEFAULT = new IngressLimits(1, Duration.ofSeconds(5), 16L * 1024 * 1024,
            32 * 1024, 64 * 1024);

    public IngressLimits {
        if (maxPipelinedRequests < 1) {
            throw new IllegalArgumentException("maxPipelinedRequests: " + maxPipelinedRequests + " (expected: >= 1)");
        }
        if (lingerTime.isNegative() || lingerTime.isZero() || lingerBytes < 0) {
            throw new IllegalArgumentException("linger: " + lingerTime + ", " + lingerBytes
                    + " bytes (expected: a positive time, bytes >= 0)");
        }
        if (writeBufferLowWaterMark < 1 || writeBufferHighWaterMark < writeBufferLowWaterMark) {
            throw new IllegalArgumentException("write buffer marks: " + writeBufferLowWaterMark + "/"
                    + writeBufferHighWaterMark + " (expected: 1 <= low <= high)");
        }
    }
}
