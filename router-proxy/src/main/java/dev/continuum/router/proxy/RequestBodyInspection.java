package dev.continuum.router.proxy;

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
     * Runs the proxy's inspection of {@code body} as for a request no dispatch hook sees (the whole body is
     * tokenized; the buffer's indexes do not move) and returns the model it extracted.
     *
     * @throws IllegalArgumentException where the proxy would answer 400
     */
    public static String model(ByteBuf body) {
        return inspect(body, false).model();
    }

    /** The prompt-token estimate the proxy hands a dispatch hook for {@code body}. */
    public static long estimatedPromptTokens(ByteBuf body) {
        return inspect(body, true).estimatedPromptTokens();
    }

    private static ParsedRequest inspect(ByteBuf body, boolean estimatePrompt) {
        try {
            return RequestBodyInspector.inspect(body, estimatePrompt);
        } catch (RequestBodyInspector.InvalidBody e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }
}
