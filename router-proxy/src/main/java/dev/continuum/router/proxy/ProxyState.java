package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.ApiKeyAuthenticator;
import dev.continuum.router.proxy.auth.RateLimits;
import dev.continuum.router.core.config.ConsistentHashConfig;
import dev.continuum.router.core.config.RouterConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * One immutable configuration generation: everything a request reads, published in one
 * volatile reference so a request sees either the old or the new configuration, never a mix.
 */
final class ProxyState {
    final RouterConfig config;
    /** Every configured backend, in configuration order. */
    final List<Backend> backends;
    /** Enabled and not internal: the ones a client's model can be sent to. */
    final List<Backend> clientFacing;
    final BackendSelector selector;
    final ApiKeyAuthenticator auth;
    final RateLimits limits;
    final RetryBudget retryBudget;
    /** The {@code created} field of {@code /v1/models} entries. */
    final long createdEpochSeconds;
    /** Whether {@code global_prompts} or a backend's {@code requires_single_leading_system} rewrites chat bodies. */
    final boolean rewritesChatBodies;

    ProxyState(RouterConfig config, List<Backend> backends, ApiKeyAuthenticator auth, RateLimits limits,
               RetryBudget retryBudget, long createdEpochSeconds) {
        this.config = config;
        this.backends = List.copyOf(backends);
        List<Backend> facing = new ArrayList<>();
        for (Backend b : backends) {
            if (b.config().enabled() && !b.config().internal()) {
                facing.add(b);
            }
        }
        this.clientFacing = List.copyOf(facing);
        ConsistentHashConfig hash = config.consistentHash();
        this.selector = BackendSelector.of(config.selectionStrategy(), this.backends,
                hash == null ? ConsistentHashConfig.defaults() : hash);
        this.auth = auth;
        this.limits = limits;
        this.retryBudget = retryBudget;
        this.createdEpochSeconds = createdEpochSeconds;
        this.rewritesChatBodies = ChatBodies.anyRewrite(config);
    }

    /** Client-facing backends that serve {@code model} (a backend without a model list serves all). */
    List<Backend> serving(String model) {
        List<Backend> out = new ArrayList<>(clientFacing.size());
        for (Backend b : clientFacing) {
            if (b.config().serves(model)) {
                out.add(b);
            }
        }
        return out;
    }
}
