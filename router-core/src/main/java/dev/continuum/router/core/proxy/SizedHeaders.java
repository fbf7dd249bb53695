package dev.continuum.router.core.proxy;

import io.netty.handler.codec.DefaultHeaders;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeadersFactory;

/**
 * Header maps sized for what a proxied message carries, with Netty's own validation. Netty's default map
 * allocates a 16-bucket table on creation, and both HTTP decoders create a trailers map for every message with
 * a {@code Content-Length} body, which nothing ever writes to: five maps per proxied request (client head and
 * trailers, upstream request, upstream response head and trailers) were a third of the bytes the buffered
 * path allocated (docs/benchmarks.md, "Buffered proxy: where the router's allocation goes"). The table never
 * resizes (entries beyond it chain), so a smaller one changes the allocation and the chain lengths, not behaviour.
 */
public final class SizedHeaders implements HttpHeadersFactory {
    /**
     * Message heads: the decoders' name and value validation (the framing checks rely on it); 8 buckets hold
     * a typical client's or server's headers in short chains.
     */
    public static final SizedHeaders HEADS = new SizedHeaders(DefaultHttpHeadersFactory.headersFactory(), 8);
    /** Trailers: the trailer validation (no framing names); almost always empty, so the smallest table. */
    public static final SizedHeaders TRAILERS = new SizedHeaders(DefaultHttpHeadersFactory.trailersFactory(), 2);
    /**
     * The upstream request the router builds from headers the decoder already validated (so no second
     * validation) plus its own.
     */
    static final SizedHeaders UPSTREAM_REQUEST =
            new SizedHeaders(DefaultHttpHeadersFactory.headersFactory().withValidation(false), 8);

    private final DefaultHttpHeadersFactory validation;
    private final int buckets;

    private SizedHeaders(DefaultHttpHeadersFactory validation, int buckets) {
        this.validation = validation;
        this.buckets = buckets;
    }

    @Override
    public DefaultHttpHeaders newHeaders() {
        return new Sized(validation.getNameValidator(), validation.getValueValidator(), buckets);
    }

    @Override
    public DefaultHttpHeaders newEmptyHeaders() {
        return new Sized(validation.getNameValidator(), validation.getValueValidator(), 2);
    }

    /** {@link DefaultHttpHeaders} with its table size chosen (Netty exposes that constructor to subclasses only). */
    private static final class Sized extends DefaultHttpHeaders {
        Sized(DefaultHeaders.NameValidator<CharSequence> names, DefaultHeaders.ValueValidator<CharSequence> values,
              int buckets) {
            super(names, values, buckets);
        }
    }
}
