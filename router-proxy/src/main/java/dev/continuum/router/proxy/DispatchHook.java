package dev.continuum.router.proxy;

import java.util.Objects;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Lets a module pin a request to upstream-side workers without core knowing how (the Dynamo shim path
 * lives in {@code router-shim}). The proxy asks the hook once per {@code /v1/chat/completions} request, and
 * once per send of a converting ingress's request (whose body it sees converted: the first send, then each
 * retry on the plan's path, narrowed to the backend that send goes to; a native passthrough's body as the client
 * sent it, {@link DispatchRequest#chatBody()} false), when
 * {@code disaggregated_serving.enabled} is true, after authentication, rate limits, model and per-key policy,
 * on the client's event loop: the hook must not block.
 *
 * <p>The hook answers now ({@link DispatchPlan}, or null for standard routing) or {@link Later}, when the plan
 * needs work that must not run on an event loop (rendering and tokenizing a prompt). The load-only path answers
 * now and allocates nothing for it.
 *
 * <p>A {@link DispatchPlan} narrows the request's candidates to the plan's backends, adds the plan's
 * headers to every attempt (after the client's untrusted headers were stripped again), never re-plans a
 * chat-completion request on a retry (a converted one's retry is a new send with a new plan), and applies the failure semantics described on {@link DispatchPlan}.
 */
@FunctionalInterface
public interface DispatchHook {
    @Nullable Answer plan(DispatchRequest request);

    /** What a hook answers: a plan now, or one later. */
    sealed interface Answer permits DispatchPlan, Later {
    }

    /**
     * A plan still being made. The request waits (holding nothing of the hook's) until {@code plan} completes, then
     * resumes on its own event loop: with the plan, or with standard routing when it completes with null or
     * exceptionally. The hook copies what it needs of the borrowed body before it returns. If the client left
     * meanwhile, the plan's listener is told {@link DispatchPlan.Outcome#ABANDONED}; so a hook must never drop a
     * plan it made, and the proxy never cancels {@code plan}.
     */
    record Later(CompletionStage<@Nullable DispatchPlan> plan) implements Answer {
        public Later {
            Objects.requireNonNull(plan, "plan");
        }
    }
}
