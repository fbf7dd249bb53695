package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.AuthResult;
import dev.continuum.router.proxy.auth.RateDecision;
import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.ConsistentHashConfig;
import dev.continuum.router.core.config.FallbackConfig;
import dev.continuum.router.core.config.SelectionStrategy;
import dev.continuum.router.proxy.metrics.RateLimitTier;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The policy checks before any backend is tried, in two steps: {@link #caller} (shutdown, API key, rate
 * limits; every route) and {@link #request} (ingress conversion, body inspection, {@code nvext} strip,
 * per-key model and backend policy, candidates; dispatched routes). Each answers admitted or refused with
 * the response that says why; nothing here writes, counts or schedules (the rate-limit buckets it draws
 * from are the only state it touches).
 */
final class Admission {
    /** What a check decided. */
    sealed interface Result permits Caller, Request, Refused {
    }

    /** An admitted caller: its key (null = anonymous), where the key was read, whether it bypasses limits. */
    record Caller(@Nullable ApiKeyConfig key, AuthResult.@Nullable CredentialSource credentialSource,
                  boolean bypassLimits) implements Result {
    }

    /**
     * An admitted request: what its body says, the body to send (owned when {@code ownsBody}: a converted
     * or stripped copy), the backends that may serve it, in configuration order, and the converter of its
     * answers (null when the body goes in the client's own wire: an OpenAI route, or a native passthrough).
     */
    record Request(ParsedRequest parsed, ByteBuf body, boolean ownsBody, List<Backend> candidates,
                   @Nullable IngressConverter converter) implements Result {
    }

    /** Refused with {@code response} (owned by the receiver); {@code rateLimitedBy} when a bucket said no. */
    record Refused(FullHttpResponse response, @Nullable RateLimitTier rateLimitedBy)
            implements Result {
        Refused(FullHttpResponse response) {
            this(response, null);
        }
    }

    private Admission() {
    }

    static Result caller(ProxyState state, boolean shuttingDown, FullHttpRequest request,
                         @Nullable InetSocketAddress remote) {
        if (shuttingDown) {
            return new Refused(OpenAiErrors.serviceUnavailable("shutting_down", "The router is shutting down."));
        }
        AuthResult auth = state.auth.authenticate(request.headers());
        if (auth instanceof AuthResult.Rejected r) {
            return new Refused(OpenAiErrors.unauthorized(r.message()));
        }
        ApiKeyConfig key = null;
        AuthResult.CredentialSource source = null;
        if (auth instanceof AuthResult.Authenticated a) {
            key = a.key();
            source = a.source();
        }
        RateDecision d = state.limits.check(remote == null ? null : remote.getAddress(), key);
        RateLimitTier deniedBy = d.deniedBy();
        if (deniedBy != null) {
            return new Refused(OpenAiErrors.rateLimited(d.retryAfterSeconds(), deniedBy.label()), deniedBy);
        }
        return new Caller(key, source, d.bypass());
    }

    /**
     * @param route          the request's route: its converter (none when {@code clientBody} is already the body
     *                       to send), and the backends that take its wire unconverted
     * @param estimatePrompt whether the dispatch hook will see the request (only then is the prompt estimated)
     */
    static Result request(ProxyState state, Caller caller, ByteBuf clientBody, ProxyRoute route,
                          boolean estimatePrompt, ByteBufAllocator alloc) {
        Predicate<BackendConfig> nativeWire = route.nativeWire();
        if (nativeWire != null && servedNatively(state, caller, clientBody, nativeWire)) {
            return request(state, caller, clientBody, null, nativeWire, estimatePrompt, alloc);
        }
        return request(state, caller, clientBody, route.converter(), null, estimatePrompt, alloc);
    }

    /**
     * Whether a backend that takes the wire unconverted serves the body's model for this caller. Free when no
     * client-facing backend does (the common case); otherwise the body's {@code model} is read once more. A body
     * that cannot be read is left to the converter, which refuses it in the wire's shape.
     */
    private static boolean servedNatively(ProxyState state, Caller caller, ByteBuf clientBody,
                                          Predicate<BackendConfig> nativeWire) {
        boolean any = false;
        for (Backend b : state.clientFacing) {
            any |= nativeWire.test(b.config());
        }
        if (!any) {
            return false;
        }
        String model;
        try {
            model = RequestBodyInspector.inspect(clientBody, false).model();
        } catch (RequestBodyInspector.InvalidBody e) {
            return false;
        }
        ApiKeyConfig k = caller.key();
        for (Backend b : state.serving(model)) {
            if (nativeWire.test(b.config()) && (k == null || k.allowedBackends().isEmpty()
                    || k.allowedBackends().contains(b.name()))) {
                return true;
            }
        }
        return false;
    }

    /**
     * @param converter  the converter of the request's wire, or null to send {@code clientBody} as it is
     * @param nativeOnly on a native passthrough, the backends that may take it (the others are not candidates)
     */
    private static Result request(ProxyState state, Caller caller, ByteBuf clientBody,
                                  @Nullable IngressConverter converter, @Nullable Predicate<BackendConfig> nativeOnly,
                                  boolean estimatePrompt, ByteBufAllocator alloc) {
        ByteBuf body = clientBody;
        if (converter != null) {
            try {
                body = converter.toChatRequest(clientBody, alloc);
            } catch (IngressConverter.InvalidRequest e) {
                return new Refused(OpenAiErrors.invalidRequest(e.getMessage(), "invalid_request"));
            }
        }
        boolean owned = body != clientBody;
        ParsedRequest p;
        try {
            p = RequestBodyInspector.inspect(body, estimatePrompt, hashesFirstUserMessage(state));
        } catch (RequestBodyInspector.InvalidBody e) {
            return refuse(e.json ? OpenAiErrors.invalidJson(e.getMessage())
                    : OpenAiErrors.invalidRequest(e.getMessage(), "invalid_request"), body, owned);
        }
        if (nativeOnly != null) {
            p = p.asPassthrough();
        }
        if (p.untrustedNvext()) {
            ByteBuf stripped;
            try {
                stripped = UntrustedBodyFields.strip(body);
            } catch (IOException e) {
                return refuse(OpenAiErrors.invalidJson("The request body could not be read."), body, owned);
            }
            if (owned) {
                body.release();
            }
            body = stripped;
            owned = true;
        }
        ApiKeyConfig k = caller.key();
        if (k != null && !k.allowedModels().isEmpty() && !k.allowedModels().contains(p.model())) {
            return refuse(OpenAiErrors.forbidden("model_not_allowed",
                    "This API key may not use the model '" + OpenAiErrors.clip(p.model()) + "'."), body, owned);
        }
        List<Backend> serving = state.serving(p.model());
        if (serving.isEmpty()) {
            if (modelNotFoundFallsBack(state, p.model())) {
                return new Request(p, body, owned, serving, converter); // no candidate: the exchange falls back
            }
            return refuse(OpenAiErrors.modelNotFound(p.model()), body, owned);
        }
        if (k != null && !k.allowedBackends().isEmpty()) {
            serving.removeIf(b -> !k.allowedBackends().contains(b.name()));
            if (serving.isEmpty()) {
                return refuse(OpenAiErrors.forbidden("backend_not_allowed",
                        "This API key may not use any backend that serves the model '" + OpenAiErrors.clip(p.model())
                                + "'."), body, owned);
            }
        }
        if (nativeOnly != null) {
            serving.removeIf(b -> !nativeOnly.test(b.config()));
        }
        return new Request(p, body, owned, serving, converter);
    }

    private static boolean hashesFirstUserMessage(ProxyState state) {
        ConsistentHashConfig ch = state.config.consistentHash();
        return state.config.selectionStrategy() == SelectionStrategy.CONSISTENT_HASH
                && (ch == null || ch.key() == ConsistentHashConfig.Key.FIRST_USER_MESSAGE);
    }

    /** {@code fallback} has a chain for {@code model} and {@code model_not_found} is one of its triggers. */
    private static boolean modelNotFoundFallsBack(ProxyState state, String model) {
        FallbackConfig f = state.config.fallback();
        return !f.chain(model).isEmpty() && f.fallbackPolicy().triggerConditions().modelNotFound();
    }

    private static Refused refuse(FullHttpResponse response, ByteBuf body, boolean owned) {
        if (owned) {
            body.release();
        }
        return new Refused(response);
    }
}
