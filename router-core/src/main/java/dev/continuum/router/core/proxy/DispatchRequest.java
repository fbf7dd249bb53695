package dev.continuum.router.core.proxy;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link DispatchHook} sees of one request.
 *
 * @param model          the client's model ID
 * @param stream         whether the client asked for a stream
 * @param usableBackends names of the request's candidate backends that can take an attempt now (serving the
 *                       model, allowed for the key, routable by health, breaker not open), in configuration
 *                       order
 * @param body           the body as every attempt will send it (an ingress's conversion done, client
 *                       {@code nvext} routing fields already removed);
 *                       borrowed: valid only during the call, never retained or released by the hook
 * @param resend         a later send of a request that has a plan already (a retry behind a converting ingress
 *                       asks again, narrowed to its backend): the request is counted by its plans' endings, so a
 *                       hook that counts requests must not count a resend it has no plan for
 */
public record DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                              long estimatedPromptTokens, boolean resend) {
    public DispatchRequest {
        Objects.requireNonNull(model, "model");
        usableBackends = List.copyOf(usableBackends);
        Objects.requireNonNull(body, "body");
    }

    /** A first ask ({@code resend} false). */
    public DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                           long estimatedPromptTokens) {
        this(model, stream, usableBackends, body, estimatedPromptTokens, false);
    }

    /** The same request with another body (a hook that copies the borrowed one). */
    public DispatchRequest withBody(ByteBuf other) {
        return new DispatchRequest(model, stream, usableBackends, other, estimatedPromptTokens, resend);
    }
}
