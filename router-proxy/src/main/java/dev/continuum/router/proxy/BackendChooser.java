package dev.continuum.router.proxy;

import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Lets a module choose among a {@code backends[]} request's candidates without the proxy knowing how (router-kv's
 * KV-aware selection for plain vLLM/SGLang backends). The proxy asks once per chat-completion request on the
 * standard path (no {@link DispatchHook} plan), after authentication, rate limits, model and per-key policy, on the
 * client's event loop: {@link #prepare} must not block. What it answers, once complete, is asked at every pick of
 * the request's first phase, among the candidates that are then healthy, untried and let through by their breaker;
 * so health checks, circuit breakers, retries, rate limits and fallback models work as without it. A fallback
 * model's phase is picked by the configured strategy.
 */
@FunctionalInterface
public interface BackendChooser {
    /**
     * Prepares a request's choice. Null: the configured strategy decides this request. A stage that completes with
     * null or exceptionally does the same. The body is borrowed for this call only (copy what is needed).
     *
     * @param model      the request's model
     * @param candidates the request's standard candidates, in configuration order
     */
    @Nullable CompletionStage<@Nullable Choice> prepare(String model, ByteBuf body, List<? extends Candidate> candidates);

    /** One request's prepared choice. */
    @FunctionalInterface
    interface Choice {
        /**
         * The index in {@code available} (non-empty) to send to, or -1 to let the configured strategy pick. Called on
         * an event loop: no lock, no blocking.
         */
        int choose(List<? extends Candidate> available);
    }

    /** What a chooser sees of a candidate backend. */
    interface Candidate {
        /** The {@code backends[].name}. */
        String name();

        /** Requests this router has in flight to it (the {@code LeastConnections} count). */
        int inFlight();
    }
}
