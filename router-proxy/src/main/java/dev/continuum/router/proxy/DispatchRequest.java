package dev.continuum.router.proxy;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
 *                       borrowed: valid only during the call, never retained or released by the hook; the
 *                       backends' own rewrites ({@code rewrites}) are not applied yet
 * @param rewrites       the rewrite each backend's copy of the body gets before it is sent (a plan's pinned body
 *                       is sent as the hook made it, so it must carry the rewrite already)
 * @param tenantId       the client's {@code x-tenant-id} header (it names a cache namespace), or null
 * @param resend         a later send of a request that has a plan already (a retry behind a converting ingress
 *                       asks again, narrowed to its backend): the request is counted by its plans' endings, so a
 *                       hook that counts requests must not count a resend it has no plan for
 * @param chatBody       whether {@code body} is a chat completion; false for a request passed through in another
 *                       wire (a {@code /v1/responses} body for backends that serve it natively), which is pinned
 *                       by model alone: the proxy never sends a plan's {@link DispatchPlan.PinnedBody} for it
 * @param sessionId      the client's {@code x-dynamo-session-id} header (session affinity), or null
 */
public record DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                              long estimatedPromptTokens, ChatRewrites rewrites, @Nullable String tenantId,
                              boolean resend, boolean chatBody, @Nullable String sessionId) {
    public DispatchRequest {
        Objects.requireNonNull(model, "model");
        usableBackends = List.copyOf(usableBackends);
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(rewrites, "rewrites");
    }

    /** As the canonical constructor, without a session. */
    public DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                           long estimatedPromptTokens, ChatRewrites rewrites, @Nullable String tenantId,
                           boolean resend, boolean chatBody) {
        this(model, stream, usableBackends, body, estimatedPromptTokens, rewrites, tenantId, resend, chatBody, null);
    }

    /** A first ask of a chat completion whose body no backend rewrites, without a tenant. */
    public DispatchRequest(String model, boolean stream, List<String> usableBackends, ByteBuf body,
                           long estimatedPromptTokens) {
        this(model, stream, usableBackends, body, estimatedPromptTokens, ChatRewrites.NONE, null, false, true, null);
    }

    /** This request with another body (a copy the hook made), everything else the same. */
    public DispatchRequest withBody(ByteBuf other) {
        return new DispatchRequest(model, stream, usableBackends, other, estimatedPromptTokens, rewrites, tenantId,
                resend, chatBody, sessionId);
    }

}
