package dev.continuum.router.core.proxy;

import org.jspecify.annotations.Nullable;

/**
 * Lets a module pin a request to upstream-side workers without core knowing how (the Dynamo shim path
 * lives in {@code router-shim}). The proxy asks the hook once per chat-completion request ({@code
 * /v1/chat/completions}, and every converting ingress, whose body it sees converted) when
 * {@code disaggregated_serving.enabled} is true, after authentication, rate limits, model and per-key policy,
 * on the client's event loop: the hook must not block.
 *
 * <p>A returned {@link DispatchPlan} narrows the request's candidates to the plan's backends, adds the plan's
 * headers to every attempt (after the client's untrusted headers were stripped again), never re-plans on a
 * retry, and applies the failure semantics described on {@link DispatchPlan}. Null means standard routing.
 */
@FunctionalInterface
public interface DispatchHook {
    @Nullable DispatchPlan plan(DispatchRequest request);
}
