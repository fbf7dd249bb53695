package dev.continuum.router.core.proxy;

import io.netty.buffer.ByteBuf;

/**
 * Benchmark seam, for the JMH module {@code router-bench} only (production code does not call it): the
 * proxy's request-body inspection ({@code RequestBodyInspector}, package-private, reached in production only
 * through a whole proxied exchange) made callable from outside this package. It delegates and adds no
 * behaviour; the inspector is unchanged.
 */
public final class RequestBodyInspection {
    private RequestBodyInspection() {
    }

    /**
     * Runs the proxy's inspection of {@code body} (the whole body is tokenized; the buffer's indexes do not
     * move) and returns the model it extracted.
     *
     * @throws IllegalArgumentException where the proxy would answer 400
     */
    public static String model(ByteBuf body) {
        try {
            return RequestBodyInspector.inspect(body).model();
        } catch (RequestBodyInspector.InvalidBody e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }
}
