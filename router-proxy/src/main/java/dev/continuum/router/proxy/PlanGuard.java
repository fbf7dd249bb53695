package dev.continuum.router.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request's {@link DispatchPlan} and its failure rules (see {@link DispatchPlan}): whether attempts still
 * run on the plan's path, the non-2xx answer held (with at most {@link DispatchPlan#MAX_INSPECTED_ERROR_BYTES}
 * of its body) until its end says what it is, the {@link Decision} that body leads to, the plan's one
 * ending, and the routing headers the client sees.
 */
final class PlanGuard {
    private static final Logger log = LoggerFactory.getLogger(PlanGuard.class);
    /** A client asking to see which backend (and, when pinned, which workers) served it; any value, even blank. */
    static final AsciiString X_BACKEND = AsciiString.cached("x-backend");
    private static final AsciiString X_CONTINUUM_BACKEND = AsciiString.cached("x-continuum-backend");
    private static final AsciiString X_CONTINUUM_ROUTING_PATH = AsciiString.cached("x-continuum-routing-path");
    private static final AsciiString X_CONTINUUM_DECISION_ID = UntrustedHeaders.DECISION_ID;
    private static final String ROUTING_PATH_UNIFIED = "unified";
    private static final String ROUTING_PATH_FALLBACK = "fallback";

    /** What a held error answer on the plan's path leads to. */
    sealed interface Decision permits Refused, Retry, Relay, Fallback {
    }

    /** The upstream refused the plan itself: answer 503 with {@code code}, no retry, no fallback. */
    record Refused(String code) implements Decision {
    }

    /** A 502/503 with a retry granted: another of the plan's backends, same headers. */
    record Retry(int status) implements Decision {
    }

    /** A stream's client error: relay {@code response} (owned by the receiver) as the upstream sent it. */
    record Relay(FullHttpResponse response) implements Decision {
    }

    /** The plan's path failed with {@code upstreamStatus}: fall back to standard routing, or fail. */
    record Fallback(int upstreamStatus) implements Decision {
    }

    /** The current send's plan; replaced by {@link #adopt} behind a converting ingress. */
    private DispatchPlan plan;
    /** The request's standard candidates; the plan's pool is a subset of them. */
    private final List<Backend> standard;
    /** Whether a send has used {@link #plan} already (the next one needs a fresh plan on a converted route). */
    private boolean planUsed;
    private boolean ended;
    private boolean firstBytesTold;
    private boolean fellBack;
    private @Nullable HeldAnswer held;

    private PlanGuard(DispatchPlan plan, List<Backend> standard) {
        this.plan = plan;
        this.standard = standard;
    }

    /**
     * Asks the hook for the request's first send, with the body as every attempt will send it: a plan, a
     * {@link DispatchHook.Later} (turned into a guard by {@link #of} when it completes), or null = standard routing
     * (no plan, a failing hook, or no usable backend). {@link SendPlanner} waits for it.
     */
    static DispatchHook.@Nullable Answer ask(DispatchHook hook, ParsedRequest p, List<Backend> candidates,
            ByteBuf body, HookContext context) {
        List<String> usable = new ArrayList<>(candidates.size());
        for (Backend c : candidates) {
            if (c.available()) {
                usable.add(c.name());
            }
        }
        if (usable.isEmpty()) {
            return null;
        }
        return askHook(hook, p, usable, body, context, false);
    }

    /**
     * The guard of a plan the hook made (now or later), or null = standard routing; a plan none of whose backends
     * is a candidate ends {@link DispatchPlan.Outcome#ABANDONED}.
     */
    static @Nullable PlanGuard of(@Nullable DispatchPlan pl, List<Backend> candidates) {
        if (pl == null) {
            return null;
        }
        PlanGuard g = new PlanGuard(pl, candidates);
        if (g.pool().isEmpty()) {
            g.end(DispatchPlan.Outcome.ABANDONED);
            return null;
        }
        return g;
    }

    private static DispatchHook.@Nullable Answer askHook(DispatchHook hook, ParsedRequest p, List<String> usable,
            ByteBuf body, HookContext context, boolean resend) {
        try {
            return hook.plan(new DispatchRequest(p.model(), p.stream(), usable, body.duplicate(),
                    p.estimatedPromptTokens(), context.rewrites(), context.tenantId(), resend, !p.passthrough(),
                    context.sessionId()));
        } catch (RuntimeException e) {
            log.warn("dispatch hook failed; the request takes standard routing", e);
            return null;
        }
    }

    /**
     * Behind a converting ingress: whether the send about to go out needs a fresh plan. The first send uses the
     * plan {@link #ask} made (and this answers false once); every later one on the plan's path (a retry) is a new
     * send ({@link #askAgain}, then {@link #adopt}).
     */
    boolean needsFreshPlan() {
        if (!planUsed) {
            planUsed = true;
            return false;
        }
        return true;
    }

    /** A later send's ask: the same body, narrowed to the {@code backend} that send goes to. */
    static DispatchHook.@Nullable Answer askAgain(DispatchHook hook, ParsedRequest p, Backend backend, ByteBuf body,
            HookContext context) {
        return askHook(hook, p, List.of(backend.name()), body, context, true);
    }

    /**
     * Takes {@code next} (the hook's answer to {@link #askAgain}, now or later) for the send to {@code backend}: the
     * previous plan ends {@link DispatchPlan.Outcome#RESENT}. False when there is no plan for that backend now (the
     * plan's path has failed; the caller falls back or fails); a plan for other backends ends
     * {@link DispatchPlan.Outcome#ABANDONED}.
     */
    boolean adopt(@Nullable DispatchPlan next, Backend backend) {
        if (next == null) {
            return false;
        }
        if (!next.backends().contains(backend.name())) {
            tell(next, DispatchPlan.Outcome.ABANDONED);
            return false;
        }
        end(DispatchPlan.Outcome.RESENT);
        plan = next;
        ended = false;
        firstBytesTold = false;
        return true;
    }

    /** What the hook learns about a request besides its body: the backends' rewrites, the tenant and the session. */
    record HookContext(ChatRewrites rewrites, @Nullable String tenantId, @Nullable String sessionId) {
    }

    /** A plan that arrived after its request ended (the client left while it was made). */
    static void abandoned(@Nullable DispatchPlan pl) {
        if (pl != null) {
            new PlanGuard(pl, List.of()).end(DispatchPlan.Outcome.ABANDONED);
        }
    }

    /** The body attempts on the plan's path send instead of the request's, or null (also after a fallback). */
    DispatchPlan.@Nullable PinnedBody pinnedBody() {
        return fellBack ? null : plan.pinnedBody();
    }

    /** The candidates that are also the plan's backends, in configuration order. */
    List<Backend> pool() {
        List<Backend> pool = new ArrayList<>(plan.backends().size());
        for (Backend c : standard) {
            if (plan.backends().contains(c.name())) {
                pool.add(c);
            }
        }
        return pool;
    }

    /** Whether attempts still run on the plan's path (with its headers). */
    boolean pinned() {
        return !fellBack;
    }

    /** The headers for an attempt: the plan's on its path, none after a fallback. */
    Map<String, String> pinHeaders() {
        return fellBack ? Map.of() : plan.upstreamHeaders();
    }

    /**
     * The decision id sent upstream with an attempt: the plan's on its path, so the worker can pair what it served
     * with the router's record; none after a fallback (standard routing made no such decision).
     */
    @Nullable String upstreamDecisionId() {
        return fellBack ? null : plan.decisionId();
    }

    /** The request's standard candidates (a fallback tries those the plan's phase did not). */
    List<Backend> standard() {
        return standard;
    }

    /** The plan's path failed and the request falls back to standard routing, without the plan's headers. */
    void fallBack() {
        end(DispatchPlan.Outcome.FELL_BACK);
        fellBack = true;
    }

    /** The answer's first content on the plan's path is being relayed: tells the plan's listener once. */
    void firstBytes() {
        if (firstBytesTold || ended || fellBack) {
            return;
        }
        firstBytesTold = true;
        try {
            plan.listener().firstBytes();
        } catch (RuntimeException e) {
            log.warn("dispatch plan listener failed", e);
        }
    }

    void end(DispatchPlan.Outcome outcome) {
        if (ended) {
            return;
        }
        ended = true;
        tell(plan, outcome);
    }

    private static void tell(DispatchPlan plan, DispatchPlan.Outcome outcome) {
        try {
            plan.listener().ended(outcome);
        } catch (RuntimeException e) {
            log.warn("dispatch plan listener failed", e);
        }
    }

    // ---------------------------------------------------------------- held error answers

    /** A non-2xx head on the plan's path: hold it (owned from now on) until its body is read. */
    void hold(HttpResponse head, ByteBufAllocator alloc) {
        held = new HeldAnswer(head, alloc, DispatchPlan.MAX_INSPECTED_ERROR_BYTES);
    }

    boolean holding() {
        return held != null;
    }

    /** The held head's keep-alive, read before {@link #decide}: the answer was read to its end. */
    boolean heldKeepAlive() {
        HeldAnswer h = held;
        return h != null && HttpUtil.isKeepAlive(h.head);
    }

    /**
     * Adds one chunk of the held answer (released here) up to the cap. Returns true on the last chunk; a
     * chunk that failed to decode discards what is held and throws nothing: check {@link #holding()}.
     */
    boolean collect(HttpContent c) {
        HeldAnswer h = held;
        if (h == null) {
            c.release();
            return false;
        }
        if (c.decoderResult().isFailure()) {
            c.release();
            discardError();
            return false;
        }
        boolean last = c instanceof LastHttpContent;
        h.add(c); // past the cap the rest is dropped: the marker is looked for in the first bytes
        return last;
    }

    /**
     * What the held answer (complete now) leads to; the hold is over. {@code stream}: the client asked for a
     * stream (its other 4xx are relayed); {@code retry} is asked only for a 502/503.
     */
    Decision decide(boolean stream, BooleanSupplier retry) {
        HeldAnswer h = held;
        held = null;
        if (h == null) {
            throw new IllegalStateException("no held error");
        }
        int code = h.head.status().code();
        if (h.body.toString(StandardCharsets.UTF_8).contains(plan.refusalMarker())) {
            h.release();
            end(DispatchPlan.Outcome.REFUSED);
            return new Refused(plan.refusalCode());
        }
        if ((code == 502 || code == 503) && retry.getAsBoolean()) {
            h.release();
            return new Retry(code);
        }
        if (stream && code < 500 && code != 429 && code != 408) {
            // A stream's other 4xx is the client's problem, not the path's: relay it as sent.
            end(DispatchPlan.Outcome.FAILED);
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, h.head.status(), h.body,
                    h.head.headers(), EmptyHttpHeaders.INSTANCE);
            ReferenceCountUtil.release(h.head);
            HopByHop.stripResponse(r.headers());
            UntrustedHeaders.stripResponse(r.headers());
            r.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, h.body.readableBytes());
            return new Relay(r);
        }
        h.release();
        return new Fallback(code);
    }

    void discardError() {
        HeldAnswer h = held;
        held = null;
        if (h != null) {
            h.release();
        }
    }

    // ---------------------------------------------------------------- what the client sees

    /**
     * Continuum's routing headers on a response: the routing path always ({@code guard} null = unified),
     * identities only when the client sent {@code x-backend}.
     */
    static void decorate(@Nullable PlanGuard guard, HttpHeaders h, @Nullable Backend served, boolean disclose) {
        h.set(X_CONTINUUM_ROUTING_PATH, guard == null ? ROUTING_PATH_UNIFIED
                : guard.fellBack ? ROUTING_PATH_FALLBACK : guard.plan.routingPath());
        String decision = guard == null ? null : guard.plan.decisionId();
        if (decision != null) {
            h.set(X_CONTINUUM_DECISION_ID, decision);
        }
        if (disclose) {
            if (served != null) {
                h.set(X_CONTINUUM_BACKEND, served.name());
            }
            if (guard != null && !guard.fellBack) {
                for (Map.Entry<String, String> e : guard.plan.disclosedHeaders().entrySet()) {
                    h.set(e.getKey(), e.getValue());
                }
            }
        }
    }
}
