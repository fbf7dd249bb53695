package dev.continuum.router.core.proxy;

import dev.continuum.router.core.config.ConsistentHashConfig;
import dev.continuum.router.core.config.SelectionStrategy;
import dev.continuum.router.core.config.TimeoutsConfig;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.core.metrics.FallbackReason;
import dev.continuum.router.core.metrics.RateLimitTier;
import dev.continuum.router.core.metrics.RetryReason;
import dev.continuum.router.core.metrics.StreamSide;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxied request, from policy checks to the last relayed byte: the orchestrator of the pieces that
 * do each step ({@link Admission}, {@link ModelsListing}, {@link PlanGuard}, {@link Candidates},
 * {@link Attempt}, {@link UpstreamRequestFactory}, {@link ResponseRelay}); docs/request-path.md walks
 * the steps in order. Everything runs on the client connection's event loop, and the upstream
 * connection is opened on (or taken from the pool of) that same loop, so no field needs synchronization.
 *
 * <p>Why this class is longer than the pieces: it is the one state machine of a request, and its
 * transitions must stay together. States: admitting ({@link #start}), attempting (an {@link Attempt} in
 * flight or a retry's backoff pending), holding (a non-2xx head on the plan's path waits for its body),
 * committed (a {@link ResponseRelay} owns the answer), finished. Events: connect and write results, the
 * response head, content, upstream close, idle and error, the attempt's timeout, the backoff, client
 * writability and close. Each transition settles the breaker permit, the upstream connection, the plan's
 * outcome and the buffers it owns at once, and every event handler checks the same two flags
 * ({@code committed}, {@code finished}); split further, those checks would be spread over classes that
 * call each other back. The rules themselves (policy, selection, plan failures, relay) live in the pieces.
 *
 * <p>Attempts: each takes a breaker permit, gets a connection, writes the request (the body to send, as a
 * retained duplicate so a retry sends the same bytes) and waits for the response head. A connect failure
 * or a 502/503 head is retried on another backend while nothing has gone to the client, within
 * {@code max_attempts} and the retry budget. Once the head is committed to the client it never retries.
 *
 * <p>Timeouts ({@link TimeoutsConfig}): each attempt's response head must arrive within its first-byte timeout;
 * a plain answer must end within its total timeout, a stream within {@code streaming.total} when set. Once the
 * head is out, an upstream silent for {@code streaming.chunk_interval} ({@link ChunkWatchdog}) or for
 * {@code idle_timeout} is treated as hung and the response is cut.
 *
 * <p>Model fallback ({@link ModelFallback}): when the model's own backends failed the request (its retries
 * spent) before anything reached the client, and the failure is one of the policy's trigger conditions, the
 * request starts over on the next fallback model with its body's {@code model} rewritten; the answer carries
 * {@code x-continuum-fallback-model}.
 *
 * <p>Buffers: the exchange owns the aggregated client request (and a converted or stripped body) and
 * releases them exactly once when it finishes ({@link #releaseRequest()}). Each upstream message handed
 * to {@link #onUpstreamMessage} is passed on to the relay or the plan guard, or released here. Error and
 * model-list responses are fresh buffers released by the write.
 */
final class ProxyExchange implements RelayControl, Attempt.Events {
    private static final Logger log = LoggerFactory.getLogger(ProxyExchange.class);

    private final DefaultProxyService service;
    private final ProxyState state;
    private final ClientExchange client;
    private final Channel clientCh;
    private final EventLoop loop;
    private final FullHttpRequest request;
    private final ProxyRoute route;
    /** The route's converter; null when the answer goes in the client's wire (an OpenAI route, a passthrough). */
    private @Nullable IngressConverter converter;

    private Admission.@Nullable Caller caller;
    private @Nullable ParsedRequest parsed;
    /** What is sent upstream: the client's body, or a converted or stripped copy ({@link #ownsBody}). */
    private ByteBuf body;
    private boolean ownsBody;
    private @Nullable Candidates candidates;
    /**
     * The hook's plan for this request, or null on the standard path. On the chat route it is never re-made on
     * a retry; behind a converting ingress every send takes a fresh one ({@link #pinThisSend}).
     */
    private @Nullable PlanGuard guard;
    /** The current (or last) attempt; an event naming another attempt is stale. */
    private @Nullable Attempt attempt;
    private @Nullable ScheduledFuture<?> backoff;
    private @Nullable ResponseRelay relay;

    private boolean committed;
    private boolean finished;
    private boolean requestReleased;
    private boolean informational;
    private int lastErrorStatus = 503;
    private String lastErrorMessage = "No backend could serve the request.";
    /** Which fallback trigger the last error is (an upstream status unless said otherwise). */
    private FallbackReason lastFailure = FallbackReason.ERROR_CODE;
    private @Nullable ModelFallback fallback;
    /** The fallback model now tried, or null while the client's own model is. */
    private @Nullable String fallbackModel;
    private long affinityKey;
    /** The timeout the current attempt's timer was armed with (for the 504's message). */
    private Duration armedTimeout = Duration.ZERO;
    private @Nullable ChunkWatchdog watchdog;

    ProxyExchange(DefaultProxyService service, ProxyState state, ClientExchange client) {
        this.service = service;
        this.state = state;
        this.client = client;
        this.clientCh = client.channel();
        this.loop = clientCh.eventLoop();
        this.request = client.request();
        this.route = client.route();
        this.converter = route.converter();
        this.body = request.content();
    }

    // ---------------------------------------------------------------- admission

    void start() {
        Admission.Result r = Admission.caller(state, service.isClosed(), request, client.remoteAddress());
        if (r instanceof Admission.Refused f) {
            refuse(f);
            return;
        }
        Admission.Caller c = (Admission.Caller) r;
        caller = c;
        if (route.kind() == ProxyRoute.Kind.MODEL_LIST) {
            answer(ModelsListing.of(state, c.key(), clientCh.alloc()));
            return;
        }
        ProxyRoute.LocalAnswer local = route.localAnswer();
        if (local != null) {
            answerLocal(local.answer(request.content(), clientCh.alloc()));
            return;
        }
        // The hook is asked about chat bodies only, and only while disaggregated serving is on; a request it
        // will not see skips the prompt estimate.
        DispatchHook hook = route.kind() == ProxyRoute.Kind.CHAT && state.config.disaggregatedServing().enabled()
                ? service.dispatchHook() : null;
        r = Admission.request(state, c, request.content(), route, hook != null, clientCh.alloc());
        if (r instanceof Admission.Refused f) {
            refuse(f);
            return;
        }
        Admission.Request q = (Admission.Request) r;
        parsed = q.parsed();
        converter = q.converter();
        body = q.body();
        ownsBody = q.ownsBody();
        DispatchHook.Answer answer = hook == null ? null : PlanGuard.ask(hook, q.parsed(), q.candidates(), body);
        if (answer instanceof DispatchHook.Later later) {
            awaitPlan(later, q.candidates(), c);
            return;
        }
        dispatch((DispatchPlan) answer, q.candidates(), c);
    }

    /** Starts the attempts, on the plan's path when there is one. */
    private void dispatch(@Nullable DispatchPlan plan, List<Backend> standard, Admission.Caller c) {
        PlanGuard g = PlanGuard.of(plan, standard);
        guard = g;
        ParsedRequest p = requireParsed();
        affinityKey = affinityKey(p);
        fallback = ModelFallback.of(state.config.fallback(), p.model(), p.passthrough() ? route.nativeWire() : null);
        candidates = new Candidates(state, g == null ? standard : g.pool(), c.bypassLimits(), affinityKey);
        state.retryBudget.onRequest();
        attempt();
    }

    private ParsedRequest requireParsed() {
        ParsedRequest p = parsed;
        if (p == null) {
            throw new IllegalStateException("dispatch before admission");
        }
        return p;
    }

    /** The request's {@code ConsistentHash} key (0 for none, or another strategy). */
    private long affinityKey(ParsedRequest p) {
        if (state.config.selectionStrategy() != SelectionStrategy.CONSISTENT_HASH) {
            return 0;
        }
        ConsistentHashConfig ch = state.config.consistentHash();
        String header = ch == null ? null : ch.header();
        return ch != null && ch.key() == ConsistentHashConfig.Key.HEADER && header != null
                ? AffinityKeys.ofHeader(request.headers(), header) : p.firstUserMessageKey();
    }

    /**
     * The hook makes the plan off the event loop: resume on this exchange's loop when it is done. A client that
     * left meanwhile released the request already ({@link #clientClosed}); the late plan is then only ended.
     */
    private void awaitPlan(DispatchHook.Later later, List<Backend> standard, Admission.Caller c) {
        later.plan().whenComplete((plan, failure) -> {
            if (failure != null) {
                log.warn("dispatch hook failed; the request takes standard routing: {}", LogSafe.escape(failure));
            }
            DispatchPlan pl = failure == null ? plan : null;
            try {
                loop.execute(() -> {
                    if (finished) {
                        PlanGuard.abandoned(pl);
                    } else {
                        dispatch(pl, standard, c);
                    }
                });
            } catch (RejectedExecutionException e) {
                PlanGuard.abandoned(pl); // the loop is shutting down; the channel goes with it
            }
        });
    }

    /** A local route's answer, written on this exchange's loop when it is ready ({@link #answer} releases it late). */
    private void answerLocal(CompletionStage<FullHttpResponse> later) {
        later.whenComplete((r, failure) -> {
            FullHttpResponse res = r != null && failure == null ? r
                    : OpenAiErrors.error(500, OpenAiErrors.SERVER, "internal_error", "The router could not answer.");
            if (loop.inEventLoop()) {
                answer(res);
                return;
            }
            try {
                loop.execute(() -> answer(res));
            } catch (RejectedExecutionException e) {
                res.release(); // the loop is shutting down; the channel goes with it
            }
        });
    }

    private void refuse(Admission.Refused f) {
        RateLimitTier tier = f.rateLimitedBy();
        if (tier != null) {
            service.metrics.rateLimited(tier);
        }
        answer(f.response());
    }

    // ---------------------------------------------------------------- attempts

    private void attempt() {
        backoff = null;
        if (finished) {
            return;
        }
        discardError();
        Candidates cs = candidatesOrThrow();
        Candidates.Pick pick = cs.next();
        if (pick == null) {
            if (pinned()) {
                pinnedFailure();
            } else if (cs.attempts() > 0) {
                failWithLastError();
            } else if (cs.backendRetryAfterSeconds() > 0) {
                service.metrics.rateLimited(RateLimitTier.BACKEND);
                answer(OpenAiErrors.rateLimited(cs.backendRetryAfterSeconds(), RateLimitTier.BACKEND.label()));
            } else if (cs.pool().isEmpty()) {
                // Admitted without a backend only because model_not_found falls back.
                if (!fallBack(FallbackReason.MODEL_NOT_FOUND, 404)) {
                    answer(OpenAiErrors.modelNotFound(modelName()));
                }
            } else if (!fallBack(FallbackReason.CIRCUIT_BREAKER_OPEN, 503)) {
                answer(OpenAiErrors.serviceUnavailable("no_healthy_backend",
                        "No healthy backend is available for the model '" + OpenAiErrors.clip(modelName()) + "'."));
            }
            return;
        }
        Attempt previous = attempt;
        if (previous != null) {
            previous.leave();
        }
        Backend b = pick.backend();
        Attempt a = new Attempt(b, pick.permit(), service.options.nanoClock().getAsLong(), loop, this);
        attempt = a;
        arm(a, state.config.timeouts().firstByte(streamRequested(), b.config(), state.config.server()));
        if (!pinThisSend(a)) {
            pinnedFailure();
            return;
        }
        a.connect();
    }

    private void arm(Attempt a, Duration t) {
        armedTimeout = t;
        a.timeout(loop.schedule(() -> onTimeout(a), t.toNanos(), TimeUnit.NANOSECONDS));
    }

    private boolean streamRequested() {
        ParsedRequest p = parsed;
        return p != null && p.stream();
    }

    /**
     * Behind a converting ingress every send on the plan's path is pinned afresh, narrowed to the backend
     * this attempt picked (the first send uses the plan that chose the path); the chat route keeps its one
     * plan. False when the hook has no pin for this send: the plan's path has failed.
     */
    private boolean pinThisSend(Attempt a) {
        PlanGuard g = guard;
        if (route.converter() == null || g == null || !g.pinned()) {
            return true;
        }
        DispatchHook hook = service.dispatchHook();
        ParsedRequest p = parsed;
        return hook != null && p != null && g.repin(hook, p, a.backend, body);
    }

    /** Whether one more attempt may be made now; consumes a retry from the budget when it says yes. */
    private boolean takeRetry() {
        return !committed && !finished && candidatesOrThrow().takeRetry();
    }

    /** Retry number n waits {@code retry}'s delay for n (scheduled on the loop, never blocking it). */
    private void scheduleRetry(Backend failed, RetryReason reason) {
        failed.resources().meters.retry(reason);
        long delay = state.config.retry().delayNanos(candidatesOrThrow().attempts(),
                ThreadLocalRandom.current().nextDouble());
        if (delay <= 0) {
            attempt();
        } else {
            backoff = loop.schedule(this::attempt, delay, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public boolean current(Attempt a) {
        return !finished && a == attempt;
    }

    @Override
    public void onConnectFailed(Attempt a, Throwable cause) {
        if (log.isDebugEnabled()) {
            log.debug("backend {}: connect failed: {}", a.backend.name(), LogSafe.escape(cause));
        }
        a.failed();
        a.cancelTimeout();
        setLastError(502, "Could not connect to the upstream backend.");
        lastFailure = FallbackReason.CONNECTION_ERROR;
        if (takeRetry()) {
            scheduleRetry(a.backend, RetryReason.CONNECT_FAILURE);
        } else {
            failWithLastError();
        }
    }

    @Override
    public FullHttpRequest upstreamRequest(Attempt a) {
        BackendEndpoint endpoint = a.backend.resources().endpoint;
        // A converted request is a chat completion wherever the client sent it.
        String target = converter == null ? endpoint.target(client.path(), client.rawQuery())
                : endpoint.target(ProxyRoute.CHAT_UPSTREAM_PATH, null);
        PlanGuard g = guard;
        Map<String, String> pins = g == null ? Map.of() : g.pinHeaders();
        ParsedRequest p = parsed;
        // A passthrough is pinned by model alone: a plan's body (a chat completion) is never sent for it.
        DispatchPlan.PinnedBody pinnedBody = g == null || p == null || p.passthrough() ? null : g.pinnedBody();
        // A plan's own body replaces the request's on its path only (a fallback sends the request's again).
        ByteBuf out = pinnedBody == null ? body : Unpooled.wrappedBuffer(pinnedBody.bytes());
        Admission.Caller c = caller;
        try {
            return UpstreamRequestFactory.build(request.headers(), request.method(),
                    c == null ? null : c.credentialSource(), a.backend, pins, out, target);
        } finally {
            if (out != body) {
                out.release(); // the request holds its own retained duplicate
            }
        }
    }

    // ---------------------------------------------------------------- upstream events

    @Override
    public void onUpstreamMessage(Object msg) {
        if (finished) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (msg instanceof HttpResponse head) {
            onResponseHead(head);
        } else if (msg instanceof HttpContent c) {
            onContent(c);
        } else {
            ReferenceCountUtil.release(msg);
        }
    }

    private void onResponseHead(HttpResponse head) {
        Attempt a = attemptOrThrow();
        int code = head.status().code();
        if (head.decoderResult().isFailure() || code < 100 || code > 599 || code == 101) {
            ReferenceCountUtil.release(head);
            upstreamFailedBeforeHead(a, "The upstream backend sent an invalid response.");
            return;
        }
        if (code < 200) {
            // 1xx interim answer (we never send Expect): skip it and its empty end marker.
            informational = true;
            ReferenceCountUtil.release(head);
            return;
        }
        a.answered(code, service.options.nanoClock().getAsLong());
        PlanGuard g = guard;
        if (g != null && g.pinned() && code >= 300) {
            // Whether this is the plan's refusal, a retry, a fallback or a relay depends on the body.
            g.hold(head, clientCh.alloc());
            return;
        }
        if ((code == 502 || code == 503) && takeRetry()) {
            ReferenceCountUtil.release(head);
            a.cancelTimeout();
            a.dropUpstream(); // the rest of this answer is unread: the connection cannot be reused
            setLastError(code, "The upstream backend answered " + code + ".");
            scheduleRetry(a.backend, code == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
            return;
        }
        ModelFallback f = fallback;
        if (code >= 400 && f != null && !pinned() && f.triggers(FallbackReason.ERROR_CODE, code)) {
            ModelFallback.Next next = f.next(state, callerOrThrow().key());
            if (next != null) {
                ReferenceCountUtil.release(head);
                a.dropUpstream(); // the rest of this answer is unread: the connection cannot be reused
                startFallback(next, FallbackReason.ERROR_CODE);
                return;
            }
        }
        committed = true;
        ParsedRequest p = parsed;
        boolean streaming = (p != null && p.stream())
                || ResponseRelay.isEventStream(head.headers().get(HttpHeaderNames.CONTENT_TYPE));
        afterHead(a, streaming);
        ResponseRelay r = new ResponseRelay(service, client, converter);
        r.fallbackModel(fallbackModel);
        relay = r;
        r.commit(head, code, g, a.backend, request.headers().contains(PlanGuard.X_BACKEND));
    }

    /**
     * The head is going to the client: the first-byte timer is done. A stream gets its chunk watchdog and its
     * total bound (if any); a plain answer keeps its total bound (re-armed when the first byte had a shorter one).
     */
    private void afterHead(Attempt a, boolean streaming) {
        TimeoutsConfig to = state.config.timeouts();
        Duration total = to.total(streaming, a.backend.config(), state.config.server());
        if (streaming || (total != null && total.compareTo(armedTimeout) != 0)) {
            a.cancelTimeout();
            if (total != null) {
                long left = total.toNanos() - (service.options.nanoClock().getAsLong() - a.startNanos);
                arm(a, Duration.ofNanos(Math.max(1, left)));
                armedTimeout = total;
            }
        }
        Duration chunk = to.chunkInterval();
        if (streaming && chunk != null) {
            ChunkWatchdog w = new ChunkWatchdog(loop, service.options.nanoClock(), chunk.toNanos(), this::onChunkSilence);
            watchdog = w;
            w.start();
        }
    }

    private void onChunkSilence() {
        if (committed && !finished) {
            if (log.isDebugEnabled()) {
                log.debug("backend {}: no chunk within streaming.chunk_interval, aborting", attemptOrThrow().backend.name());
            }
            upstreamAbort();
        }
    }

    private void stopWatchdog() {
        ChunkWatchdog w = watchdog;
        if (w != null) {
            w.stop();
            watchdog = null;
        }
    }

    private void onContent(HttpContent c) {
        if (informational) {
            boolean last = c instanceof LastHttpContent;
            c.release();
            if (last) {
                informational = false;
            }
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            boolean last = g.collect(c);
            if (!g.holding()) {
                setLastError(502, "The upstream backend sent an invalid response.");
                failWithLastError();
            } else if (last) {
                decideError(g);
            }
            return;
        }
        ResponseRelay r = relay;
        if (r == null) {
            c.release();
            return;
        }
        ChunkWatchdog w = watchdog;
        if (w != null) {
            w.touch();
        }
        int outcome = r.relay(c, attemptOrThrow().upstream());
        if (outcome == ResponseRelay.DONE) {
            finishRelayed(r);
        } else if (outcome == ResponseRelay.ABORT) {
            upstreamAbort();
        }
    }

    /** The held answer on the plan's path is complete: its decision. */
    private void decideError(PlanGuard g) {
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.releaseUpstream(g.heldKeepAlive()); // the answer was read to its end
        ParsedRequest p = parsed;
        PlanGuard.Decision d = g.decide(p != null && p.stream(), this::takeRetry);
        if (d instanceof PlanGuard.Refused f) {
            answer(OpenAiErrors.serviceUnavailable(f.code(),
                    "The upstream refused the pinned prefill/decode pair; the request was not retried."));
        } else if (d instanceof PlanGuard.Retry t) {
            setLastError(t.status(), "The upstream backend answered " + t.status() + ".");
            scheduleRetry(a.backend, t.status() == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
        } else if (d instanceof PlanGuard.Relay l) {
            answer(l.response());
        } else if (d instanceof PlanGuard.Fallback f) {
            int s = f.upstreamStatus();
            setLastError(s >= 500 ? s : 502, "The upstream backend answered " + s + ".");
            pinnedFailure();
        }
    }

    @Override
    public void onUpstreamReadComplete() {
        if (committed && !finished) {
            clientCh.flush();
        }
    }

    @Override
    public void onUpstreamClosed() {
        Attempt a = attempt;
        if (finished || a == null || a.takeUpstream() == null) {
            return;
        }
        if (committed) {
            upstreamAbort();
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            // A held error answer cut before its end: the head was counted, the body says nothing more.
            g.discardError();
            setLastError(502, "The upstream backend closed the connection mid-answer.");
            failWithLastError();
            return;
        }
        if (a.reconnectIfStale()) {
            return;
        }
        if (!a.wasRequestWritten()) {
            onConnectFailed(a, new IOException("upstream closed before the request was sent"));
            return;
        }
        // The request may have been processed: a 502, not a retry.
        upstreamFailedBeforeHead(a, "The upstream backend closed the connection before responding.",
                FallbackReason.CONNECTION_ERROR);
    }

    @Override
    public void onUpstreamError(Throwable cause) {
        if (log.isDebugEnabled()) {
            Attempt a = attempt;
            log.debug("backend {}: upstream error: {}", a == null ? "?" : a.backend.name(), LogSafe.escape(cause));
        }
    }

    @Override
    public void onUpstreamIdle() {
        // Before the head, the request timeout governs (a long generation may be silent). After it,
        // an upstream silent for the whole idle timeout mid-response is hung: cut the response.
        if (committed && !finished) {
            if (log.isDebugEnabled()) {
                log.debug("backend {}: no data for the idle timeout mid-response, aborting", attemptOrThrow().backend.name());
            }
            upstreamAbort();
        }
    }

    private void upstreamFailedBeforeHead(Attempt a, String message) {
        upstreamFailedBeforeHead(a, message, FallbackReason.ERROR_CODE);
    }

    private void upstreamFailedBeforeHead(Attempt a, String message, FallbackReason kind) {
        a.failed();
        setLastError(502, message);
        lastFailure = kind;
        failWithLastError();
    }

    private void onTimeout(Attempt a) {
        if (finished || a != attempt) {
            return;
        }
        a.timeoutFired();
        if (committed) {
            upstreamAbort();
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            g.discardError(); // the head was already counted
        } else {
            a.failed();
        }
        if (pinned()) {
            pinnedFailure();
            return;
        }
        if (fallBack(FallbackReason.TIMEOUT, 504)) {
            return;
        }
        answer(OpenAiErrors.gatewayTimeout("The upstream backend did not answer within " + armedTimeout.toMillis()
                + " ms."));
    }

    // ---------------------------------------------------------------- model fallback

    /** Moves on to the next fallback model when {@code reason} triggers one and one is left; false otherwise. */
    private boolean fallBack(FallbackReason reason, int status) {
        ModelFallback f = fallback;
        if (f == null || committed || finished || pinned() || !f.triggers(reason, status)) {
            return false;
        }
        ModelFallback.Next next = f.next(state, callerOrThrow().key());
        if (next == null) {
            return false;
        }
        return startFallback(next, reason);
    }

    private boolean startFallback(ModelFallback.Next next, FallbackReason reason) {
        ByteBuf rewritten;
        try {
            rewritten = ModelFallback.rewrite(body, next.model(), clientCh.alloc());
        } catch (IOException e) {
            return false; // inspected as a JSON object on admission, so not expected
        }
        Attempt a = attempt;
        if (a != null) {
            a.abandon();
        }
        if (ownsBody) {
            body.release();
        }
        body = rewritten;
        ownsBody = true;
        ParsedRequest p = parsed;
        if (p != null) {
            parsed = p.withModel(next.model());
        }
        fallbackModel = next.model();
        service.metrics.fellBack(reason);
        if (log.isDebugEnabled()) {
            log.debug("model fallback to {} ({})", LogSafe.escape(next.model()), reason.label());
        }
        candidates = new Candidates(state, next.candidates(), callerOrThrow().bypassLimits(), affinityKey);
        attempt();
        return true;
    }

    // ---------------------------------------------------------------- the plan's path

    /** Whether attempts still run on the plan's path (with its headers). */
    private boolean pinned() {
        PlanGuard g = guard;
        return g != null && g.pinned();
    }

    /**
     * The plan's path failed before anything reached the client (transport failure, timeout, non-2xx other
     * than the refusal): fall back to standard routing without the plan's headers, or fail.
     */
    private void pinnedFailure() {
        PlanGuard g = guard;
        if (g == null) {
            throw new IllegalStateException("no plan");
        }
        g.discardError();
        Attempt a = attempt;
        if (a != null) {
            a.abandon();
        }
        List<Backend> rest = candidatesOrThrow().untried(g.standard());
        if (!state.config.disaggregatedServing().fallbackToUnified() || rest.isEmpty()) {
            g.end(DispatchPlan.Outcome.FAILED);
            answer(OpenAiErrors.error(502, OpenAiErrors.SERVER, "disaggregated_decode_failed",
                    "The disaggregated serving path failed" + (rest.isEmpty() ? " and no other backend serves the model."
                            : ".")));
            return;
        }
        g.fallBack();
        candidates = new Candidates(state, rest, callerOrThrow().bypassLimits());
        attempt();
    }

    // ---------------------------------------------------------------- client events

    @Override
    public void clientWritabilityChanged() {
        ResponseRelay r = relay;
        Attempt a = attempt;
        if (!finished && r != null && a != null) {
            r.resume(a.upstream());
        }
    }

    @Override
    public void clientClosed() {
        if (finished) {
            return;
        }
        finished = true;
        cancelBackoff();
        stopWatchdog();
        if (committed) {
            service.metrics.streamAborted(StreamSide.CLIENT);
        }
        Attempt a = attempt;
        if (a != null) {
            a.abandon(); // the upstream is never pooled: its response is unfinished
        }
        closeRelay();
        releaseRequest();
    }

    // ---------------------------------------------------------------- endings

    private void finishRelayed(ResponseRelay r) {
        PlanGuard g = guard;
        if (g != null) {
            g.end(DispatchPlan.Outcome.SERVED);
        }
        finished = true;
        stopWatchdog();
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.releaseUpstream(r.upstreamKeepAlive());
        r.close();
        releaseRequest();
        client.responseComplete(r.status(), r.closeClient(), r.lastWrite());
    }

    /** The upstream failed after the head went out: the client's response is cut (connection closed). */
    private void upstreamAbort() {
        PlanGuard g = guard;
        if (g != null) {
            g.end(DispatchPlan.Outcome.FAILED);
        }
        finished = true;
        stopWatchdog();
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.dropUpstream();
        service.metrics.streamAborted(StreamSide.UPSTREAM);
        ResponseRelay r = relay;
        int status = r == null ? 0 : r.status();
        closeRelay();
        releaseRequest();
        ChannelFuture closed = clientCh.close();
        client.responseComplete(status, true, closed);
    }

    private void failWithLastError() {
        if (pinned()) {
            pinnedFailure();
            return;
        }
        if (fallBack(lastFailure, lastErrorStatus)) {
            return;
        }
        answer(switch (lastErrorStatus) {
            case 503 -> OpenAiErrors.serviceUnavailable("service_unavailable", lastErrorMessage);
            case 504 -> OpenAiErrors.gatewayTimeout(lastErrorMessage);
            default -> OpenAiErrors.badGateway(lastErrorMessage);
        });
    }

    /**
     * Answers with a complete response of our own (an error, in the ingress's shape, or the model list); only
     * before commit.
     */
    private void answer(FullHttpResponse response) {
        if (finished || committed) {
            response.release();
            return;
        }
        finished = true;
        committed = true;
        cancelBackoff();
        Attempt a = attempt;
        if (a != null) {
            a.abandon();
        }
        PlanGuard g = guard;
        if (g != null) {
            PlanGuard.decorate(g, response.headers(), a == null ? null : a.backend,
                    request.headers().contains(PlanGuard.X_BACKEND));
        }
        String fm = fallbackModel;
        if (fm != null) {
            response.headers().set(ModelFallback.X_FALLBACK_MODEL, fm);
        }
        releaseRequest();
        // The router's own 2xx answers (the model list, a local route's) are already in the client's wire.
        FullHttpResponse r = response.status().code() < 300 ? response : ResponseRelay.convertError(converter, response);
        boolean close = client.closeAfterResponse();
        if (close) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        int status = r.status().code();
        ChannelFuture f = clientCh.writeAndFlush(r);
        client.responseComplete(status, close, f);
    }

    // ---------------------------------------------------------------- helpers

    private void setLastError(int statusCode, String message) {
        lastErrorStatus = statusCode;
        lastErrorMessage = message;
        lastFailure = FallbackReason.ERROR_CODE;
    }

    private String modelName() {
        ParsedRequest p = parsed;
        return p == null ? "" : p.model();
    }

    private Attempt attemptOrThrow() {
        Attempt a = attempt;
        if (a == null) {
            throw new IllegalStateException("no attempt");
        }
        return a;
    }

    private Candidates candidatesOrThrow() {
        Candidates c = candidates;
        if (c == null) {
            throw new IllegalStateException("not admitted");
        }
        return c;
    }

    private Admission.Caller callerOrThrow() {
        Admission.Caller c = caller;
        if (c == null) {
            throw new IllegalStateException("not admitted");
        }
        return c;
    }

    private void discardError() {
        PlanGuard g = guard;
        if (g != null) {
            g.discardError();
        }
    }

    private void cancelBackoff() {
        ScheduledFuture<?> t = backoff;
        if (t != null) {
            t.cancel(false);
            backoff = null;
        }
    }

    private void closeRelay() {
        ResponseRelay r = relay;
        if (r != null) {
            r.close();
        }
    }

    private void releaseRequest() {
        PlanGuard g = guard;
        if (g != null) {
            g.discardError();
            g.end(DispatchPlan.Outcome.ABANDONED);
        }
        if (!requestReleased) {
            requestReleased = true;
            request.release();
            if (ownsBody) {
                body.release();
            }
        }
    }
}
