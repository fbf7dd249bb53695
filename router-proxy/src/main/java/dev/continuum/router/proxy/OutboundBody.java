package dev.continuum.router.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.FullHttpRequest;
import java.io.IOException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What every attempt of one request sends, and who owns it: the client's body as admitted, or a converted,
 * stripped or (after a model fallback) rewritten copy owned here; its parse; and the fallback model it now names.
 * Releases the client's request and an owned body exactly once. Used on the exchange's event loop.
 */
final class OutboundBody {
    private final FullHttpRequest request;
    private ByteBuf body;
    private boolean owned;
    private @Nullable ParsedRequest parsed;
    private @Nullable String fallbackModel;
    private boolean released;

    OutboundBody(FullHttpRequest request) {
        this.request = request;
        this.body = request.content();
    }

    /** Admission's result: the body every attempt will send and its parse. */
    void admitted(Admission.Request q) {
        parsed = q.parsed();
        body = q.body();
        owned = q.ownsBody();
    }

    ByteBuf body() {
        return body;
    }

    ParsedRequest parsed() {
        return Objects.requireNonNull(parsed, "not admitted");
    }

    /** The model now asked for ("" before admission). */
    String model() {
        ParsedRequest p = parsed;
        return p == null ? "" : p.model();
    }

    /** Whether the client asked for a stream. */
    boolean stream() {
        ParsedRequest p = parsed;
        return p != null && p.stream();
    }

    /** The fallback model now tried, or null while the client's own is. */
    @Nullable String fallbackModel() {
        return fallbackModel;
    }

    /**
     * The body rewritten for {@code model} ({@link ModelFallback#rewrite}). False when it cannot be: admission read it
     * as a JSON object, so that is not expected.
     */
    boolean switchModel(String model, ByteBufAllocator alloc) {
        ByteBuf rewritten;
        try {
            rewritten = ModelFallback.rewrite(body, model, alloc);
        } catch (IOException e) {
            return false;
        }
        if (owned) {
            body.release();
        }
        body = rewritten;
        owned = true;
        ParsedRequest p = parsed;
        if (p != null) {
            parsed = p.withModel(model);
        }
        fallbackModel = model;
        return true;
    }

    /** Releases the client's request and an owned body; idempotent. */
    void release() {
        if (!released) {
            released = true;
            request.release();
            if (owned) {
                body.release();
            }
        }
    }
}
