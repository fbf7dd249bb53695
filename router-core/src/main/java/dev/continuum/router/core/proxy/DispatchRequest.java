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
 * @param chatBody       whether {@code body} is a chat completion; false for a request passed through in another
 *                       wire (a {@code /v1/responses} body for backends that serve it natively), which is pinned
 *                       by model alone: the proxy never sends a plan's {@link DispatchPlan.PinnedBody} for it
 */
public record DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                              long estimatedPromptTokens, boolean chatBody) {
    public DispatchRequest {
        Objects.requireNonNull(model, "model");
        usableBackends = List.copyOf(usableBackends);
        Objects.requireNonNull(body, "body");
    }

    /** A chat-completion request. */
    public DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                           long estimatedPromptTokens) {
        this(model, stream, usableBackends, body, estimatedPromptTokens, true);
    }
}
