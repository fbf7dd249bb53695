package dev.continuum.router.proxy.http;

import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;

/**
 * Passed down the pipeline in place of a request that a guard refused, so the request handler
 * answers it in order after any request still in flight, then closes.
 *
 * @param method the request's method when it was decoded, else null
 * @param uri    the request's target when it was decoded, else null: the answer is in the wire of the route it names
 */
record RejectedRequest(Rejection reason, @Nullable HttpMethod method, @Nullable String uri) {
    int status() {
        return reason.status;
    }
}
