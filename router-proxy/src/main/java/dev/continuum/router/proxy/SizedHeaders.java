package dev.continuum.router.proxy;

import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;

/**
 * Trailer maps with the smallest table. Both HTTP decoders create a trailers map for every message with a
 * {@code Content-Length} body, which nothing ever writes to; Netty's default map allocates a 16-bucket table on
 * creation (docs/benchmarks.md, "Header maps sized for proxied messages"). Netty's own "empty" map is the same
 * class with 2 buckets and the same validators, so it still takes a chunked message's trailers (the table never
 * resizes, entries chain). Plain {@code DefaultHttpHeaders}, not a subclass: a second map class on the hot path
 * costs more CPU at the header call sites than the smaller tables of message heads saved in allocation.
 */
public final class SizedHeaders implements HttpHeadersFactory {
    /** Trailers with Netty's trailer validation (no framing names). */
    public static final SizedHeaders TRAILERS = new SizedHeaders(DefaultHttpHeadersFactory.trailersFactory());

    private final DefaultHttpHeadersFactory netty;

    private SizedHeaders(DefaultHttpHeadersFactory netty) {
        this.netty = netty;
    }

    @Override
    public HttpHeaders newHeaders() {
        return netty.newEmptyHeaders();
    }

    @Override
    public HttpHeaders newEmptyHeaders() {
        return netty.newEmptyHeaders();
    }
}
