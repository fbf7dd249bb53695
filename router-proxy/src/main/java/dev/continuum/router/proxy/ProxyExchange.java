package dev.continuum.router.proxy;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.metrics.FallbackReason;
import dev.continuum.router.proxy.metrics.RateLimitTier;
import dev.continuum.router.proxy.metrics.RetryReason;
import dev.continuum.router.proxy.metrics.StreamAbort;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxied request, from policy checks to the last relayed byte: the orchestrator of the pieces that do each
 * step ({@link Admission}, {@link ModelsListing}, {@link SendPlanner} and {@link PlanGuard}, {@link Candidates},
 * {@link Attempt}, {@link RequestTimeouts}, {@link UpstreamRequestFactory}, {@link Failover} (retries, backoff,
 * {@link ModelFallback}, the plan's fall back, the last error), {@link ResponseRelay}); docs/request-path.md walks the steps in order. Everything runs on the client
 * connection's event loop, and the upstream connection is opened on (or taken from the pool of) that same loop,
 * so no field needs synchronization.
 *
 * <p>What stays here is the request's one state machine, whose transitions must stay together: admitting
 * ({@link #start}), planning a send, attempting (an {@link Attempt} in flight or a retry's backoff pending),
 * holding (a non-2xx head on the plan's path waits for its body), committed (a {@link ResponseRelay} owns the
 * answer), finished. Events: the plan, connect and write results, the response head, content, upstream close,
 * idle and error, the attempt's timeout, the chunk watchdog, the backoff, client writability and close. Each
 * transition settles the breaker permit, the upstream connection, the plan's outcome and the buffers at once, and
 * every event handler checks the same two flags ({@code committed}, {@code finished}); the rules themselves
 * (policy, selection, plan failures, timeouts, fallback, relay) live in the pieces.
 *
 * <p>Buffers: {@link OutboundBody} owns the client's request and the body sent, released once when the exchange
 * finishes. Each upstream message handed to {@link #onUpstreamMessage} is passed on to the relay or the plan guard,
 * or released here. The router's own answers are fresh buffers released by the write.
 */
final class ProxyExchange implements RelayControl, Attempt.Events, SendPlanner.Sends, RequestTimeouts.Expiry,
        Failover.Exchange {
    private static final Logger log = LoggerFactory.getLogger(ProxyExchange.class);
    private static final AsciiString X_TENANT_ID = AsciiString.cached("x-tenant-id");
    private static final AsciiString X_REQUEST_ID = AsciiString.cached("x-request-id");

    private final DefaultProxyService service;
    private final ProxyState state;
    private final ClientExchange client;
    private final Channel clientCh;
    private final EventLoop loop;
    private final ProxyRoute route;
    /** The route's converter; null when the answer goes in the client's wire (an OpenAI route, a passthrough). */
    private @Nullable IngressConverter converter;
    private final OutboundBody out;
    private final RequestTimeouts timeouts;
    private final Failover failover;

    private Admission.@Nullable Caller caller;
    /** The request's standard candidates (a plan narrows them; a fallback tries what is left of them). */
    private List<Backend> standard = List.of();
    /** The chat body's per-backend rewrites ({@code global_prompts}), or null when the config has none. */
    private @Nullable ChatBodies chatBodies;
    /** The request's plan, or null on the standard path; behind a converting ingress each send adopts a fresh one. */
    private @Nullable PlanGuard guard;
    /** The current (or last) attempt; an event naming another attempt is stale. */
    private @Nullable Attempt attempt;
    private @Nullable ResponseRelay relay;
    private boolean committed;
    private boolean finished;
    private boolean informational;

    ProxyExchange(DefaultProxyService service, ProxyState state, ClientExchange client) {
        this.service = service;
        this.state = state;
        this.client = client;
        this.clientCh = client.channel();
        this.loop = clientCh.eventLoop();
        this.route = client.route();
        this.converter = route.converter();
        this.out = new OutboundBody(client.request());
        this.timeouts = new RequestTimeouts(service.options.timer(), loop, state.config, this);
        this.failover = new Failover(service, state, out, route, loop, clientCh.alloc(), this);
    }

    // ---------------------------------------------------------------- admission and the first plan

    void start() {
        FullHttpRequest request = client.request();
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
            LaterAnswer.onLoop(loop, local.answer(request.content(), clientCh.alloc()), this::answer);
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
        out.admitted(q);
        converter = q.converter();
        standard = q.candidates();
        ChatBodies cb = route.kind() == ProxyRoute.Kind.CHAT ? ChatBodies.of(state) : null;
        if (cb != null) {
            cb.model(q.parsed().model());
        }
        chatBodies = cb;
        if (hook != null) {
            SendPlanner.first(hook, q.parsed(), standard, out.body(), hookContext(), loop, this);
        } else if (!BackendChoosing.ask(service.backendChooser(), route, q.parsed(), standard, out.body(), loop,
                failover, this)) {
            planned(null);
        }
    }

    private void refuse(Admission.Refused f) {
        RateLimitTier tier = f.rateLimitedBy();
        if (tier != null) {
            service.metrics.rateLimited(tier);
        }
        answer(f.response());
    }

    @Override
    public boolean wants(@Nullable Attempt a) {
        return !finished && a == attempt;
    }

    /** The first send's plan (now or later): the attempts start, on the plan's path when there is one. */
    @Override
    public void planned(@Nullable DispatchPlan plan) {
        PlanGuard g = PlanGuard.of(plan, standard);
        guard = g;
        failover.begin(callerOrThrow(), g == null ? standard : g.pool(), client.request().headers());
        state.retryBudget.onRequest();
        attempt();
    }

    // ---------------------------------------------------------------- attempts

    @Override
    public void attempt() {
        failover.backoffOver();
        if (finished) {
            return;
        }
        discardError();
        Candidates cs = failover.candidates();
        Candidates.Pick pick = cs.next();
        if (pick == null) {
            failover.noCandidate(cs);
            return;
        }
        Attempt previous = attempt;
        if (previous != null) {
            previous.leave();
        }
        Attempt a = new Attempt(pick.backend(), pick.permit(), service.options.nanoClock().getAsLong(), loop, this);
        attempt = a;
        PlanGuard g = guard;
        if (route.converter() != null && g != null && g.pinned() && g.needsFreshPlan()) {
            // Behind a converting ingress a retry on the plan's path is a new send: it waits for its own plan.
            DispatchHook hook = service.dispatchHook();
            if (hook == null) {
                failover.pinnedFailure();
            } else {
                SendPlanner.again(hook, g, out.parsed(), a, out.body(), hookContext(), loop, this);
            }
            return;
        }
        send(a);
    }

    @Override
    public void planned(Attempt a, boolean pinned) {
        if (pinned) {
            send(a);
        } else {
            failover.pinnedFailure();
        }
    }

    private void send(Attempt a) {
        timeouts.firstByte(a, out.stream());
        a.connect();
    }

    private PlanGuard.HookContext hookContext() {
        ChatBodies cb = chatBodies;
        return new PlanGuard.HookContext(cb == null ? ChatRewrites.NONE : cb,
                client.request().headers().get(X_TENANT_ID),
                client.request().headers().get(UntrustedHeaders.SESSION_ID));
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
        failover.retryOrFail(a.backend, RetryReason.CONNECT_FAILURE,
                LastError.connection("Could not connect to the upstream backend."));
    }

    @Override
    public FullHttpRequest upstreamRequest(Attempt a) {
        Admission.Caller c = caller;
        return UpstreamRequestFactory.forAttempt(client, converter, out.parsed().passthrough(), guard, c == null ? null : c.credentialSource(),
                a.backend, out.body(), chatBodies);
    }

    // ---------------------------------------------------------------- upstream events

    @Override
    public void onUpstreamMessage(Object msg) {
        if (finished) {
            ReferenceCountUtil.release(msg);
        } else if (msg instanceof HttpResponse head) {
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
            upstreamFailedBeforeHead(a, LastError.badGateway("The upstream backend sent an invalid response."));
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
        if ((code == 502 || code == 503) && failover.takeRetry()) {
            ReferenceCountUtil.release(head);
            a.cancelTimeout();
            a.dropUpstream(); // the rest of this answer is unread: the connection cannot be reused
            failover.error(LastError.answered(code));
            failover.scheduleRetry(a.backend, code == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
            return;
        }
        if (code >= 400 && failover.fallBack(FallbackReason.ERROR_CODE, code)) {
            ReferenceCountUtil.release(head); // the attempt was abandoned: the rest of this answer is unread
            return;
        }
        boolean eventStream = ResponseRelay.isEventStream(head.headers().get(HttpHeaderNames.CONTENT_TYPE));
        if (converter != null && !out.stream() && code < 300 && eventStream) {
            // The client asked for one answer: it never gets a stream it did not ask for, in any wire.
            ReferenceCountUtil.release(head);
            if (log.isDebugEnabled()) {
                log.debug("backend {}: answered a buffered request with an event stream", a.backend.name());
            }
            answer(OpenAiErrors.badGateway("The upstream backend answered a request for one answer with an event"
                    + " stream."));
            return;
        }
        committed = true;
        boolean streaming = out.stream() || eventStream;
        timeouts.afterHead(a, streaming);
        ResponseRelay r = new ResponseRelay(service, client, converter);
        r.fallbackModel(out.fallbackModel());
        relay = r;
        r.commit(head, code, g, a.backend, client.request().headers().contains(PlanGuard.X_BACKEND));
    }

    private void onContent(HttpContent c) {
        if (informational) {
            informational = !(c instanceof LastHttpContent);
            c.release();
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            boolean last = g.collect(c);
            if (!g.holding()) {
                failover.error(LastError.badGateway("The upstream backend sent an invalid response."));
                failover.failWithLastError();
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
        timeouts.chunk();
        if (g != null && c.content().isReadable()) {
            g.firstBytes();
        }
        int outcome = r.relay(c, attemptOrThrow().upstream());
        if (outcome == ResponseRelay.DONE) {
            finishRelayed(r);
        } else if (outcome == ResponseRelay.ABORT) {
            upstreamAbort(r.abortReason(), r.abortDetail());
        }
    }

    /** The held answer on the plan's path is complete: its decision. */
    private void decideError(PlanGuard g) {
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.releaseUpstream(g.heldKeepAlive()); // the answer was read to its end
        failover.heldAnswer(g, a.backend, out.stream());
    }

    @Override
    public void onUpstreamReadComplete() {
        if (committed && !finished) {
            ResponseRelay r = relay;
            Attempt a = attempt;
            if (r != null) {
                r.endOfRead(a == null ? null : a.upstream()); // a converting relay's events of this read
            }
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
            upstreamAbort(StreamAbort.UPSTREAM_CLOSED, "the upstream closed the connection mid-answer");
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            // A held error answer cut before its end: the head was counted, the body says nothing more.
            g.discardError();
            failover.error(LastError.badGateway("The upstream backend closed the connection mid-answer."));
            failover.failWithLastError();
        } else if (!a.reconnectIfStale()) {
            if (!a.wasRequestWritten()) {
                onConnectFailed(a, new IOException("upstream closed before the request was sent"));
            } else {
                // The request may have been processed: a 502, not a retry.
                upstreamFailedBeforeHead(a,
                        LastError.connection("The upstream backend closed the connection before responding."));
            }
        }
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
        cutHung(StreamAbort.IDLE_TIMEOUT, "no data for the idle timeout mid-answer");
    }

    @Override
    public void onChunkSilence() {
        cutHung(StreamAbort.CHUNK_INTERVAL, "no chunk within the streaming chunk interval");
    }

    /** A committed answer's upstream went silent for too long: the response is ended (or cut). */
    private void cutHung(StreamAbort reason, String why) {
        if (committed && !finished) {
            upstreamAbort(reason, why);
        }
    }

    private void upstreamFailedBeforeHead(Attempt a, LastError error) {
        a.failed();
        failover.error(error);
        failover.failWithLastError();
    }

    @Override
    public void onTimeout(Attempt a) {
        if (finished || a != attempt) {
            return;
        }
        a.timeoutFired();
        if (committed) {
            upstreamAbort(StreamAbort.REQUEST_TIMEOUT, "the request timeout ran out mid-answer");
            return;
        }
        PlanGuard g = guard;
        if (g != null && g.holding()) {
            g.discardError(); // the head was already counted
        } else {
            a.failed();
        }
        failover.timedOut(timeouts.armedMillis());
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
        failover.cancelBackoff();
        timeouts.stop();
        if (committed) {
            service.metrics.streamAborted(StreamAbort.CLIENT_CLOSED);
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
        endPlan(DispatchPlan.Outcome.SERVED);
        finished = true;
        timeouts.stop();
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.releaseUpstream(r.upstreamKeepAlive());
        r.close();
        releaseRequest();
        client.responseComplete(r.status(), r.closeClient(), r.lastWrite());
    }

    /**
     * The upstream failed ({@code reason}: {@code detail}) after its answer was committed to the client: counted,
     * logged once, and the client's answer ended in its wire's words by a converting relay (an error answer when
     * nothing went out yet, else the stream's error event and a terminated body), or cut (connection closed) by a
     * relay that converts nothing.
     */
    private void upstreamAbort(StreamAbort reason, String detail) {
        endPlan(DispatchPlan.Outcome.FAILED);
        finished = true;
        timeouts.stop();
        Attempt a = attemptOrThrow();
        a.cancelTimeout();
        a.dropUpstream();
        service.metrics.streamAborted(reason);
        String requestId = client.request().headers().get(X_REQUEST_ID);
        log.warn("backend {}: stream fault {} on {} (x-request-id {}): {}", a.backend.name(), reason.label(),
                route.path(), requestId == null ? "none" : LogSafe.escape(requestId), detail);
        ResponseRelay r = relay;
        if (r != null && r.fail(reason, "The upstream backend's answer failed: " + detail + ".")) {
            r.close();
            releaseRequest();
            client.responseComplete(r.status(), r.closeClient(), r.lastWrite());
            return;
        }
        int status = r == null ? 0 : r.status();
        closeRelay();
        releaseRequest();
        client.responseComplete(status, true, clientCh.close());
    }

    /** Answers with a complete response of our own (an error, in the ingress's shape, or the model list); only before commit. */
    @Override
    public void answer(FullHttpResponse response) {
        if (finished || committed) {
            response.release();
            return;
        }
        finished = true;
        committed = true;
        failover.cancelBackoff();
        Attempt a = attempt;
        if (a != null) {
            a.abandon();
        }
        releaseRequest();
        ResponseRelay.answer(client, converter, response, guard, a == null ? null : a.backend, out.fallbackModel());
    }

    // ---------------------------------------------------------------- for the failover

    @Override
    public boolean open() {
        return !committed && !finished;
    }

    @Override
    public @Nullable PlanGuard guard() {
        return guard;
    }

    @Override
    public void abandonAttempt() {
        Attempt a = attempt;
        if (a != null) {
            a.abandon();
        }
    }

    @Override
    public void modelSwitched(String model) {
        ChatBodies cb = chatBodies;
        if (cb != null) {
            cb.model(model);
        }
    }

    // ---------------------------------------------------------------- helpers

    private Attempt attemptOrThrow() {
        return Objects.requireNonNull(attempt, "no attempt");
    }

    private Admission.Caller callerOrThrow() {
        return Objects.requireNonNull(caller, "not admitted");
    }

    private void endPlan(DispatchPlan.Outcome outcome) {
        PlanGuard g = guard;
        if (g != null) {
            g.end(outcome);
        }
    }

    private void discardError() {
        PlanGuard g = guard;
        if (g != null) {
            g.discardError();
        }
    }

    private void closeRelay() {
        ResponseRelay r = relay;
        if (r != null) {
            r.close();
        }
    }

    private void releaseRequest() {
        discardError();
        endPlan(DispatchPlan.Outcome.ABANDONED);
        out.release();
    }
}
