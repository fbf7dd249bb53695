package dev.continuum.router.proxy.http;

import java.time.Duration;

/**
 * Compiled-in bounds of the ingress that configuration does not set.
 *
 * @param maxPipelinedRequests requests read ahead while one is in flight on a connection; reading
 *                             pauses beyond it (HTTP/1.1 pipelining is answered in order)
 * @param rejectLinger         after a 413/414/431 the server stops sending, keeps discarding
 *                             input this long, then closes: closing at once with unread input
 *                             makes the kernel reset the connection, and the client might lose
 *                             the error response
 * @param writeBufferLowWaterMark  client write buffer size under which a paused relay resumes
 * @param writeBufferHighWaterMark client write buffer size over which a relay pauses its upstream
 */
public record IngressLimits(int maxPipelinedRequests, Duration rejectLinger, int writeBufferLowWaterMark,
                            int writeBufferHighWaterMark) {
    public static final IngressLimits DEFAULT = new IngressLimits(1, Duration.ofSeconds(2), 32 * 1024, 64 * 1024);

    public IngressLimits {
        if (maxPipelinedRequests < 1) {
            throw new IllegalArgumentException("maxPipelinedRequests: " + maxPipelinedRequests + " (expected: >= 1)");
        }
        if (writeBufferLowWaterMark < 1 || writeBufferHighWaterMark < writeBufferLowWaterMark) {
            throw new IllegalArgumentException("write buffer marks: " + writeBufferLowWaterMark + "/"
                    + writeBufferHighWaterMark + " (expected: 1 <= low <= high)");
        }
    }
}
