package dev.continuum.router.core.proxy;

import org.jspecify.annotations.Nullable;

/**
 * Lets a module pin a request to upstream-side workers without core knowing how (the Dynamo shim path
 * lives in {@code router-shim}). The proxy asks the hook once per {@code /v1/chat/completions} request, and
 * once per send of a converting ingress's request (whose body it sees converted: the first send, then each
 * retry on the plan's path, narrowed to the backend that send goes to), when
 * {@code disaggregated_serving.enabled} is true, after authentication, rate limits, model and per-key policy,
 * on the client's event loop: the hook must not block.
 *
 * <p>A returned {@link DispatchPlan} narrows the request's candidates to the plan's backends, adds the plan's
 * headers to every attempt (after the client's untrusted headers were stripped again), never re-plans a
 * chat-completion request on a retry (a converted one's retry is a new send with a new plan), and applies the failure semantics described on {@link DispatchPlan}. Null means standard routing.
 */
@FunctionalInterface
public interface DispatchHook {
    @Nullable DispatchPlan plan(DispatchRequest request);
}
