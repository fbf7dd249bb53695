package dev.continuum.router.proxy.http;

/**
 * Why the ingress refused a request before routing it: the status the client gets and the
 * {@code reason} label of {@code continuum_ingress_rejected_total}.
 */
enum Rejection {
    MALFORMED(400, "malformed"),
    BODY_READ_TIMEOUT(408, "body_read_timeout"),
    BODY_TOO_LARGE(413, "body_too_large"),
    URI_TOO_LONG(414, "uri_too_long"),
    HEADERS_TOO_LARGE(431, "headers_too_large"),
    UNSUPPORTED_TRANSFER_CODING(501, "unsupported_transfer_coding"),
    /** Every connection together holds {@code max_buffered_request_size} of request bodies. */
    BUFFERS_FULL(503, "buffers_full"),
    /** {@code max_connections} connections are open. */
    CONNECTION_LIMIT(503, "connection_limit"),
    /** An allocation failed while reading the request. */
    OUT_OF_MEMORY(503, "out_of_memory");

    final int status;
    final String label;

    Rejection(int status, String label) {
        this.status = status;
        this.label = label;
    }
}
