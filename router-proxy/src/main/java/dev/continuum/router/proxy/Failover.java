package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.FallbackReason;
import dev.continuum.router.proxy.metrics.RateLimitTier;
import dev.continuum.router.proxy.metrics.RetryReason;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * One exchange's way forward when an attempt gives the client nothing: the candidates left, a retry after its
 * backoff (within the retry budget), the next fallback model ({@link ModelFallback}), the plan's fall back to
 * standard routing, or the final error ({@link LastError}). It decides; the {@link Exchange} moves (starts the
 * next attempt, answers). Runs on the exchange's event loop, like the exchange.
 */
final class Failover {
    /** The exchange this decides for. */
    interface Exchange {
        /** Neither committed to an answer nor finished: a retry or a fallback may still happen. */
        boolean open();

        /** The request's plan, or null on the standard path. */
        @Nullable PlanGuard guard();

        /** Abandons the attempt in flight, if any (its upstream connection is not reused). */
        void abandonAttempt();

        /** Starts the next attempt on {@link #candidates()}. */
        void attempt();

        /** Answers with a complete response of the router's own; only before commit. */
        void answer(FullHttpResponse response);

        /** The body sent from now on names {@code model} (a fallback model). */
        void modelSwitched(String model);
    }

    private final DefaultProxyService service;
    private final ProxyState state;
    private final OutboundBody out;
    private final ProxyRoute route;
    private final EventLoop loop;
    private final ByteBufAllocator alloc;
    private final Exchange exchange;
    private Admission.@Nullable Caller caller;
    private @Nullable Candidates candidates;
    private @Nullable ModelFallback fallback;
    private LastError lastError = LastError.NONE;
    private long affinityKey;
    /** The {@link BackendChooser}'s answer for the first phase, or null: the strategy picks. */
    private BackendChooser.@Nullable Choice choice;
    private @Nullable Future<?> backoff;

    /** {@code loop} and {@code alloc} are the client connection's. */
    Failover(DefaultProxyService service, ProxyState state, OutboundBody out, ProxyRoute route, EventLoop loop,
             ByteBufAllocator alloc, Exchange exchange) {
        this.service = service;
        this.state = state;
        this.out = out;
        this.route = route;
        this.loop = loop;
        this.alloc = alloc;
        this.exchange = exchange;
    }

    /** The first send is planned: attempts start on {@code pool} (the plan's, or the standard candidates). */
    void begin(Admission.Caller c, List<Backend> pool, HttpHeaders headers) {
        caller = c;
        ParsedRequest p = out.parsed();
        affinityKey = AffinityKeys.of(state.config, headers, p);
        fallback = ModelFallback.of(state.config.fallback(), p.model(), p.passthrough() ? route.nativeWire() : null);
        candidates = new Candidates(state, pool, c.bypassLimits(), affinityKey, choice);
    }

    /** The chooser's answer for the first phase (before {@link #begin}). */
    void choice(BackendChooser.@Nullable Choice c) {
        choice = c;
    }

    Candidates candidates() {
        return Objects.requireNonNull(candidates, "not admitted");
    }

    /** What the client gets if nothing better comes. */
    void error(LastError e) {
        lastError = e;
    }

    /** Whether one more attempt may be made now; consumes a retry from the budget when it says yes. */
    boolean takeRetry() {
        return exchange.open() && candidates().takeRetry();
    }

    /** Retry number n waits {@code retry}'s delay for n (on the proxy's timer, never blocking the loop). */
    void scheduleRetry(Backend failed, RetryReason reason) {
        failed.resources().meters.retry(reason);
        long delay = state.config.retry().delayNanos(candidates().attempts(),
                ThreadLocalRandom.current().nextDouble());
        if (delay <= 0) {
            exchange.attempt();
        } else {
            backoff = service.options.timer().schedule(loop, exchange::attempt, delay);
        }
    }

    /** {@code failed} failed with {@code error}: a retry when the budget allows one, else the error (or a fallback). */
    void retryOrFail(Backend failed, RetryReason reason, LastError error) {
        lastError = error;
        if (takeRetry()) {
            scheduleRetry(failed, reason);
        } else {
            failWithLastError();
        }
    }

    /** The attempt got no response head within {@code armedMillis}: the plan's fall back, a fallback model, or 504. */
    void timedOut(long armedMillis) {
        if (pinned()) {
            pinnedFailure();
        } else if (!fallBack(FallbackReason.TIMEOUT, 504)) {
            exchange.answer(OpenAiErrors.gatewayTimeout("The upstream backend did not answer within " + armedMillis
                    + " ms."));
        }
    }

    /**
     * The non-2xx answer held on the plan's path was read whole (from {@code backend}): the plan's refusal is
     * answered, a retryable status retried, another relayed as it came, or the plan falls back.
     */
    void heldAnswer(PlanGuard g, Backend backend, boolean stream) {
        PlanGuard.Decision d = g.decide(stream, this::takeRetry);
        if (d instanceof PlanGuard.Refused f) {
            exchange.answer(OpenAiErrors.serviceUnavailable(f.code(),
                    "The upstream refused the pinned prefill/decode pair; the request was not retried."));
        } else if (d instanceof PlanGuard.Retry t) {
            lastError = LastError.answered(t.status());
            scheduleRetry(backend, t.status() == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
        } else if (d instanceof PlanGuard.Relay l) {
            exchange.answer(l.response());
        } else if (d instanceof PlanGuard.Fallback f) {
            int s = f.upstreamStatus();
            lastError = s >= 500 ? LastError.answered(s)
                    : LastError.badGateway("The upstream backend answered " + s + ".");
            pinnedFailure();
        }
    }

    /** The next attempt starts (a backoff that ran out, or no backoff). */
    void backoffOver() {
        backoff = null;
    }

    void cancelBackoff() {
        Future<?> t = backoff;
        if (t != null) {
            t.cancel(false);
            backoff = null;
        }
    }

    /** Whether attempts still run on the plan's path (with its headers). */
    boolean pinned() {
        PlanGuard g = exchange.guard();
        return g != null && g.pinned();
    }

    /** No backend can take the next attempt. */
    void noCandidate(Candidates cs) {
        if (pinned()) {
            pinnedFailure();
        } else if (cs.attempts() > 0) {
            failWithLastError();
        } else if (cs.backendRetryAfterSeconds() > 0) {
            service.metrics.rateLimited(RateLimitTier.BACKEND);
            exchange.answer(OpenAiErrors.rateLimited(cs.backendRetryAfterSeconds(), RateLimitTier.BACKEND.label()));
        } else if (cs.pool().isEmpty()) {
            // Admitted without a backend only because model_not_found falls back.
            if (!fallBack(FallbackReason.MODEL_NOT_FOUND, 404)) {
                exchange.answer(OpenAiErrors.modelNotFound(out.model()));
            }
        } else if (!fallBack(FallbackReason.CIRCUIT_BREAKER_OPEN, 503)) {
            exchange.answer(OpenAiErrors.serviceUnavailable("no_healthy_backend",
                    "No healthy backend is available for the model '" + OpenAiErrors.clip(out.model()) + "'."));
        }
    }

    /**
     * Moves on to the next fallback model ({@link ModelFallback}) when {@code reason} triggers one and one is left,
     * with the body rewritten for it; false otherwise (and always on the plan's path).
     */
    boolean fallBack(FallbackReason reason, int status) {
        ModelFallback f = fallback;
        if (f == null || !exchange.open() || pinned()) {
            return false;
        }
        Admission.Caller c = callerOrThrow();
        ModelFallback.Next next = f.take(reason, status, state, c.key());
        if (next == null || !out.switchModel(next.model(), alloc)) {
            return false;
        }
        exchange.abandonAttempt();
        exchange.modelSwitched(next.model());
        service.metrics.fellBack(reason);
        candidates = new Candidates(state, next.candidates(), c.bypassLimits(), affinityKey);
        exchange.attempt();
        return true;
    }

    /**
     * The plan's path failed before anything reached the client (transport failure, timeout, non-2xx other than
     * the refusal, no plan for a resend): fall back to standard routing without the plan's headers, or fail.
     */
    void pinnedFailure() {
        PlanGuard g = Objects.requireNonNull(exchange.guard(), "no plan");
        g.discardError();
        exchange.abandonAttempt();
        List<Backend> rest = candidates().untried(g.standard());
        if (!state.config.disaggregatedServing().fallbackToUnified() || rest.isEmpty()) {
            g.end(DispatchPlan.Outcome.FAILED);
            exchange.answer(OpenAiErrors.error(502, OpenAiErrors.SERVER, "disaggregated_decode_failed",
                    "The disaggregated serving path failed" + (rest.isEmpty() ? " and no other backend serves the model."
                            : ".")));
            return;
        }
        g.fallBack();
        candidates = new Candidates(state, rest, callerOrThrow().bypassLimits());
        exchange.attempt();
    }

    void failWithLastError() {
        if (pinned()) {
            pinnedFailure();
        } else if (!fallBack(lastError.trigger(), lastError.status())) {
            exchange.answer(lastError.response());
        }
    }

    private Admission.Caller callerOrThrow() {
        return Objects.requireNonNull(caller, "not admitted");
    }
}
