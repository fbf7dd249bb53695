package dev.continuum.router.proxy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.FallbackConfig;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.metrics.FallbackReason;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.util.AsciiString;
import java.io.IOException;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request's walk along its model's {@code fallback.fallback_chains} entry: which trigger conditions move
 * it on, which fallback model comes next (one served by a backend the caller may use), and the body rewritten
 * for it. Only the original model's chain is followed (a fallback model's own chain is not), at most
 * {@code max_fallback_attempts} models. Used on the event loop of one exchange; the body rewrite parses JSON,
 * which happens only on this rare path.
 */
final class ModelFallback {
    /** The response header naming the model that served (or last failed) a request that fell back. */
    static final AsciiString X_FALLBACK_MODEL = AsciiString.cached("x-continuum-fallback-model");
    private static final Logger log = LoggerFactory.getLogger(ModelFallback.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The next model and what to try it on. */
    record Next(String model, List<Backend> candidates) {
    }

    private final FallbackConfig config;
    private final List<String> chain;
    /** A passthrough's backends (the body is in a wire only they take), else null = every backend. */
    private final @Nullable Predicate<BackendConfig> only;
    private int next;

    private ModelFallback(FallbackConfig config, List<String> chain, @Nullable Predicate<BackendConfig> only) {
        this.config = config;
        this.chain = chain;
        this.only = only;
    }

    /**
     * Null when {@code model} has no chain (or fallback is off): the common case costs nothing more.
     *
     * @param only when not null, fallback models are tried on the backends it accepts only
     */
    static @Nullable ModelFallback of(FallbackConfig config, String model, @Nullable Predicate<BackendConfig> only) {
        List<String> chain = config.chain(model);
        return chain.isEmpty() ? null : new ModelFallback(config, chain, only);
    }

    /** Whether the policy's trigger conditions include {@code reason} (for an upstream status, {@code status}). */
    boolean triggers(FallbackReason reason, int status) {
        FallbackConfig.Triggers t = config.fallbackPolicy().triggerConditions();
        return switch (reason) {
            case ERROR_CODE -> t.errorCodes().contains(status);
            case TIMEOUT -> t.timeout();
            case CONNECTION_ERROR -> t.connectionError();
            case MODEL_NOT_FOUND -> t.modelNotFound();
            case CIRCUIT_BREAKER_OPEN -> t.circuitBreakerOpen();
        };
    }

    /** The next fallback model some backend serves for this caller, or null when the chain is spent. */
    @Nullable Next next(ProxyState state, @Nullable ApiKeyConfig key) {
        int max = Math.min(chain.size(), config.fallbackPolicy().maxFallbackAttempts());
        while (next < max) {
            String model = chain.get(next++);
            if (key != null && !key.allowedModels().isEmpty() && !key.allowedModels().contains(model)) {
                continue;
            }
            List<Backend> serving = state.serving(model);
            if (key != null && !key.allowedBackends().isEmpty()) {
                serving.removeIf(b -> !key.allowedBackends().contains(b.name()));
            }
            Predicate<BackendConfig> o = only;
            if (o != null) {
                serving.removeIf(b -> !o.test(b.config()));
            }
            if (!serving.isEmpty()) {
                return new Next(model, serving);
            }
        }
        return null;
    }

    /**
     * The next model when {@code reason} (for an upstream status, {@code status}) is one of the policy's trigger
     * conditions and the chain has one left for this caller; null otherwise.
     */
    @Nullable Next take(FallbackReason reason, int status, ProxyState state, @Nullable ApiKeyConfig key) {
        if (!triggers(reason, status)) {
            return null;
        }
        Next n = next(state, key);
        if (n != null && log.isDebugEnabled()) {
            log.debug("model fallback to {} ({})", LogSafe.escape(n.model()), reason.label());
        }
        return n;
    }

    /** {@code body} (a JSON object) with its {@code model} replaced; a new buffer the caller owns. */
    static ByteBuf rewrite(ByteBuf body, String model, ByteBufAllocator alloc) throws IOException {
        ObjectNode tree;
        try (ByteBufInputStream in = new ByteBufInputStream(body.duplicate())) {
            tree = (ObjectNode) JSON.readTree(in);
        } catch (ClassCastException e) {
            throw new IOException("not a JSON object", e);
        }
        tree.put("model", model);
        byte[] bytes = JSON.writeValueAsBytes(tree);
        ByteBuf out = alloc.buffer(bytes.length);
        out.writeBytes(bytes);
        return out;
    }
}
