package dev.continuum.router.core.proxy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.continuum.router.core.auth.AuthResult;
import dev.continuum.router.core.auth.RateDecision;
import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.RetryConfig;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.core.metrics.RateLimitTier;
import dev.continuum.router.core.metrics.RetryReason;
import dev.continuum.router.core.metrics.StatusClass;
import dev.continuum.router.core.metrics.StreamSide;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One proxied request, from policy checks to the last relayed byte. Everything runs on the
 * client connection's event loop, and the upstream connection is opened on (or taken from the
 * pool of) that same loop, so no field needs synchronization.
 *
 * <p>Flow: API key, rate limits, body inspection ({@code model}, {@code stream}), per-key policy,
 * candidates, then attempts. An attempt takes a breaker permit, gets a connection, writes the
 * request (the client's body bytes, unchanged, as a retained duplicate so a retry can send them
 * again; only a body whose {@code nvext} carries worker-pinning fields is rewritten without them),
 * and waits for the response head. A connect failure or a 502/503 head is retried on
 * another backend while nothing has gone to the client, within {@code max_attempts} and the retry
 * budget. Once the head is written to the client the exchange is committed: it never retries.
 *
 * <p>Relay and backpressure: each upstream message is written to the client as it arrives and
 * flushed at the end of each upstream read. Only the last write of a response carries a promise:
 * the others use the channel's void promise (a failed write fires {@code exceptionCaught}, and the
 * client connection closes), which spares a promise, and for a chunked answer a promise combiner,
 * per relayed chunk. When the client channel stops being writable, the
 * upstream's auto-read is turned off; it is turned back on when the client drains
 * ({@link #clientWritabilityChanged()}), so at most one read's worth plus the client's write
 * buffer is held, whatever the stream's length.
 *
 * <p>Timeouts: the backend's timeout bounds each attempt up to the response head for a stream and
 * up to the last byte otherwise; once the head is out, an upstream that stays silent for
 * {@code idle_timeout} is treated as hung and the response is cut.
 *
 * <p>Buffers: the exchange owns the aggregated client request and releases it exactly once when
 * it finishes ({@link #releaseRequest()}). Each upstream message handed to
 * {@link #onUpstreamMessage} is either written to the client (the write releases it) or released
 * here. Error and model-list responses are fresh buffers released by the write.
 */
final class ProxyExchange implements RelayControl, UpstreamListener, UpstreamPool.AcquireCallback {
    private static final Logger log = LoggerFactory.getLogger(ProxyExchange.class);
    private static final JsonFactory JSON = JsonFactory.builder().build();
    private static final AsciiString X_API_KEY = AsciiString.cached("x-api-key");
    /** A client asking to see which backend (and, when pinned, which workers) served it; any value, even blank. */
    private static final AsciiString X_BACKEND = AsciiString.cached("x-backend");
    private static final AsciiString X_CONTINUUM_BACKEND = AsciiString.cached("x-continuum-backend");
    private static final AsciiString X_CONTINUUM_ROUTING_PATH = AsciiString.cached("x-continuum-routing-path");
    private static final String ROUTING_PATH_UNIFIED = "unified";
    private static final String ROUTING_PATH_FALLBACK = "fallback";

    private final DefaultProxyService service;
    private final ProxyState state;
    private final ClientExchange client;
    private final Channel clientCh;
    private final EventLoop loop;
    private final FullHttpRequest request;
    /** What is sent upstream: the client's body, or a rewritten copy without nvext routing fields. */
    private ByteBuf body;
    private boolean ownsBody;

    private @Nullable ApiKeyConfig key;
    private AuthResult.@Nullable CredentialSource credentialSource;
    private boolean bypassLimits;
    private @Nullable ParsedRequest parsed;
    private List<Backend> candidates = List.of();
    private final List<Backend> tried = new ArrayList<>(2);
    private int attempts;
    private long backendRetryAfterSeconds;

    private @Nullable Backend backend;
    private long permit = CircuitBreaker.NO_PERMIT;
    private @Nullable Channel upstream;
    private boolean upstreamReused;
    private boolean staleRetried;
    private boolean requestWritten;
    private long attemptStart;
    private @Nullable ScheduledFuture<?> timeout;
    private @Nullable ScheduledFuture<?> backoff;

    private boolean committed;
    private boolean finished;
    private boolean requestReleased;
    private boolean informational;
    private boolean upstreamKeepAlive;
    private boolean closeClient;
    private int status;
    private int lastErrorStatus = 503;
    /** The hook's plan for this request, or null on the standard path. Never re-made on a retry. */
    private @Nullable DispatchPlan plan;
    private boolean planEnded;
    private boolean fellBack;
    /** The request's standard candidates; the plan narrowed {@link #candidates} to its backends. */
    private List<Backend> standardCandidates = List.of();
    /** A non-2xx head on the plan's path, held (with up to 64 KiB of its body) until the body says what it is. */
    private @Nullable HttpResponse errorHead;
    private @Nullable CompositeByteBuf errorBody;
    private String lastErrorMessage = "No backend could serve the request.";

    ProxyExchange(DefaultProxyService service, ProxyState state, ClientExchange client) {
        this.service = service;
        this.state = state;
        this.client = client;
        this.clientCh = client.channel();
        this.loop = clientCh.eventLoop();
        this.request = client.request();
        this.body = request.content();
    }

    // ---------------------------------------------------------------- policy

    void start() {
        if (service.isClosed()) {
            answer(OpenAiErrors.serviceUnavailable("shutting_down", "The router is shutting down."));
            return;
        }
        AuthResult auth = state.auth.authenticate(request.headers());
        if (auth instanceof AuthResult.Rejected r) {
            answer(OpenAiErrors.unauthorized(r.message()));
            return;
        }
        if (auth instanceof AuthResult.Authenticated a) {
            key = a.key();
            credentialSource = a.source();
        }
        InetSocketAddress remote = client.remoteAddress();
        RateDecision d = state.limits.check(remote == null ? null : remote.getAddress(), key);
        RateLimitTier deniedBy = d.deniedBy();
        if (deniedBy != null) {
            service.metrics.rateLimited(deniedBy);
            answer(OpenAiErrors.rateLimited(d.retryAfterSeconds(), deniedBy.label()));
            return;
        }
        bypassLimits = d.bypass();
        if (client.route() == ProxyRoute.MODELS) {
            respondModels();
            return;
        }
        ParsedRequest p;
        try {
            // The prompt estimate is only for the dispatch hook: a request it will not see skips that walk.
            p = RequestBodyInspector.inspect(request.content(), service.dispatchHook() != null && plansThisRoute());
        } catch (RequestBodyInspector.InvalidBody e) {
            answer(e.json ? OpenAiErrors.invalidJson(e.getMessage())
                    : OpenAiErrors.invalidRequest(e.getMessage(), "invalid_request"));
            return;
        }
        parsed = p;
        if (p.untrustedNvext()) {
            try {
                body = UntrustedBodyFields.strip(request.content());
                ownsBody = true;
            } catch (IOException e) {
                answer(OpenAiErrors.invalidJson("The request body could not be read."));
                return;
            }
        }
        ApiKeyConfig k = key;
        if (k != null && !k.allowedModels().isEmpty() && !k.allowedModels().contains(p.model())) {
            answer(OpenAiErrors.forbidden("model_not_allowed",
                    "This API key may not use the model '" + OpenAiErrors.clip(p.model()) + "'."));
            return;
        }
        List<Backend> serving = state.serving(p.model());
        if (serving.isEmpty()) {
            answer(OpenAiErrors.modelNotFound(p.model()));
            return;
        }
        if (k != null && !k.allowedBackends().isEmpty()) {
            serving.removeIf(b -> !k.allowedBackends().contains(b.name()));
            if (serving.isEmpty()) {
                answer(OpenAiErrors.forbidden("backend_not_allowed",
                        "This API key may not use any backend that serves the model '" + OpenAiErrors.clip(p.model())
                                + "'."));
                return;
            }
        }
        candidates = serving;
        planDispatch(p);
        state.retryBudget.onRequest();
        attempt();
    }

    /** The dispatch hook is asked about chat completions only, and only while disaggregated serving is on. */
    private boolean plansThisRoute() {
        return client.route() == ProxyRoute.CHAT_COMPLETIONS && state.config.disaggregatedServing().enabled();
    }

    /** Asks the dispatch hook, once per request; a plan narrows the candidates to its backends. */
    private void planDispatch(ParsedRequest p) {
        DispatchHook hook = service.dispatchHook();
        if (hook == null || !plansThisRoute()) {
            return;
        }
        List<String> usable = new ArrayList<>(candidates.size());
        for (Backend c : candidates) {
            if (c.available()) {
                usable.add(c.name());
            }
        }
        if (usable.isEmpty()) {
            return;
        }
        DispatchPlan pl;
        try {
            pl = hook.plan(new DispatchRequest(p.model(), p.stream(), usable, body.duplicate(),
                    p.estimatedPromptTokens()));
        } catch (RuntimeException e) {
            log.warn("dispatch hook failed; the request takes standard routing", e);
            return;
        }
        if (pl == null) {
            return;
        }
        List<Backend> pool = new ArrayList<>(pl.backends().size());
        for (Backend c : candidates) {
            if (pl.backends().contains(c.name())) {
                pool.add(c);
            }
        }
        plan = pl;
        if (pool.isEmpty()) {
            endPlan(DispatchPlan.Outcome.ABANDONED);
            plan = null;
            return;
        }
        standardCandidates = candidates;
        candidates = pool;
    }

    /** Whether attempts still run on the plan's path (with its headers). */
    private boolean pinned() {
        return plan != null && !fellBack;
    }

    private void endPlan(DispatchPlan.Outcome outcome) {
        DispatchPlan pl = plan;
        if (pl == null || planEnded) {
            return;
        }
        planEnded = true;
        try {
            pl.listener().ended(outcome);
        } catch (RuntimeException e) {
            log.warn("dispatch plan listener failed", e);
        }
    }

    /**
     * The plan's path failed before anything reached the client (transport failure, timeout, non-2xx other
     * than the refusal): fall back to standard routing without the plan's headers, or fail.
     */
    private void pinnedFailure() {
        discardError();
        cancelTimeout();
        abandonAttempt();
        List<Backend> rest = new ArrayList<>(standardCandidates.size());
        for (Backend c : standardCandidates) {
            if (!wasTried(c)) {
                rest.add(c);
            }
        }
        if (!state.config.disaggregatedServing().fallbackToUnified() || rest.isEmpty()) {
            endPlan(DispatchPlan.Outcome.FAILED);
            answer(OpenAiErrors.error(502, OpenAiErrors.SERVER, "disaggregated_decode_failed",
                    "The disaggregated serving path failed" + (rest.isEmpty() ? " and no other backend serves the model."
                            : ".")));
            return;
        }
        endPlan(DispatchPlan.Outcome.FELL_BACK);
        fellBack = true;
        candidates = rest;
        attempts = 0;
        backendRetryAfterSeconds = 0;
        attempt();
    }

    // ---------------------------------------------------------------- attempts

    private void attempt() {
        backoff = null;
        if (finished) {
            return;
        }
        discardError();
        Backend b = select();
        if (b == null) {
            if (pinned()) {
                pinnedFailure();
            } else if (attempts > 0) {
                failWithLastError();
            } else if (backendRetryAfterSeconds > 0) {
                service.metrics.rateLimited(RateLimitTier.BACKEND);
                answer(OpenAiErrors.rateLimited(backendRetryAfterSeconds, RateLimitTier.BACKEND.label()));
            } else {
                answer(OpenAiErrors.serviceUnavailable("no_healthy_backend",
                        "No healthy backend is available for the model '" + OpenAiErrors.clip(modelName()) + "'."));
            }
            return;
        }
        backend = b;
        attempts++;
        tried.add(b);
        requestWritten = false;
        staleRetried = false;
        attemptStart = service.options.nanoClock().getAsLong();
        Duration t = b.config().effectiveTimeout(state.config.server());
        timeout = loop.schedule(this::onTimeout, t.toNanos(), TimeUnit.NANOSECONDS);
        b.resources().pool.acquire(loop, this);
    }

    /** Picks among untried available candidates; takes the breaker permit and the backend's token. */
    private @Nullable Backend select() {
        List<Backend> avail = null;
        for (Backend c : candidates) {
            if (!wasTried(c) && c.available()) {
                if (avail == null) {
                    avail = new ArrayList<>(candidates.size());
                }
                avail.add(c);
            }
        }
        while (avail != null && !avail.isEmpty()) {
            Backend b = state.selector.pick(avail);
            long p = b.resources().breaker.tryAcquire();
            if (p == CircuitBreaker.NO_PERMIT) {
                avail.remove(b);
                continue;
            }
            if (!bypassLimits) {
                RateDecision d = state.limits.checkBackend(b.name());
                if (!d.allowed()) {
                    b.resources().breaker.onIgnored(p);
                    backendRetryAfterSeconds = backendRetryAfterSeconds == 0 ? d.retryAfterSeconds()
                            : Math.min(backendRetryAfterSeconds, d.retryAfterSeconds());
                    avail.remove(b);
                    continue;
                }
            }
            permit = p;
            return b;
        }
        return null;
    }

    private boolean wasTried(Backend b) {
        for (int i = 0; i < tried.size(); i++) {
            if (tried.get(i) == b) {
                return true;
            }
        }
        return false;
    }

    /** Whether one more attempt may be made now; consumes a retry from the budget when it says yes. */
    private boolean takeRetry() {
        RetryConfig rc = state.config.retry();
        if (committed || finished || !rc.enabled() || attempts >= rc.maxAttempts()) {
            return false;
        }
        boolean alternative = false;
        for (Backend c : candidates) {
            if (!wasTried(c) && c.available()) {
                alternative = true;
                break;
            }
        }
        return alternative && state.retryBudget.tryRetry();
    }

    private void scheduleRetry(Backend failed, RetryReason reason) {
        failed.resources().meters.retry(reason);
        Duration delay = state.config.retry().backoff();
        if (delay.isZero() || delay.isNegative()) {
            attempt();
        } else {
            backoff = loop.schedule(this::attempt, delay.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void onAcquired(Channel ch, boolean reused) {
        Backend b = backend;
        if (finished || b == null) {
            // The exchange ended while connecting (client left, timeout): keep the clean connection.
            if (b != null) {
                b.resources().pool.release(ch);
            } else {
                ch.close();
            }
            return;
        }
        upstream = ch;
        upstreamReused = reused;
        UpstreamHandler h = ch.pipeline().get(UpstreamHandler.class);
        h.attach(this);
        ch.config().setAutoRead(true);
        ch.writeAndFlush(upstreamRequest(b)).addListener(f -> onRequestWritten(ch, f.isSuccess(), f.cause()));
    }

    private void onRequestWritten(Channel ch, boolean success, @Nullable Throwable cause) {
        if (ch != upstream || finished) {
            return;
        }
        if (success) {
            requestWritten = true;
            return;
        }
        // Nothing reached the upstream: safe to try again.
        detachUpstream(ch);
        upstream = null;
        if (upstreamReused && !staleRetried) {
            staleRetried = true;
            backendOrThrow().resources().pool.connect(loop, this);
            return;
        }
        onConnectFailed(cause != null ? cause : new IOException("request write failed"));
    }

    @Override
    public void onConnectFailed(Throwable cause) {
        if (finished) {
            return; // permit already settled by whoever finished the exchange
        }
        Backend b = backendOrThrow();
        if (log.isDebugEnabled()) {
            log.debug("backend {}: connect failed: {}", b.name(), LogSafe.escape(cause));
        }
        b.resources().breaker.onFailure(permit);
        permit = CircuitBreaker.NO_PERMIT;
        b.resources().meters.request(StatusClass.ERROR);
        cancelTimeout();
        setLastError(502, "Could not connect to the upstream backend.");
        if (takeRetry()) {
            scheduleRetry(b, RetryReason.CONNECT_FAILURE);
        } else {
            failWithLastError();
        }
    }

    private FullHttpRequest upstreamRequest(Backend b) {
        HttpHeaders in = request.headers();
        HttpHeaders out = DefaultHttpHeadersFactory.headersFactory().withValidation(false).newHeaders();
        List<String> listed = HopByHop.connectionListed(in);
        AsciiString backendAuth = b.authorization();
        Iterator<Map.Entry<CharSequence, CharSequence>> it = in.iteratorCharSequence();
        while (it.hasNext()) {
            Map.Entry<CharSequence, CharSequence> e = it.next();
            CharSequence name = e.getKey();
            if (HopByHop.isRequestHopByHop(name) || UntrustedHeaders.isUntrusted(name)
                    || (!listed.isEmpty() && HopByHop.listed(listed, name))) {
                continue;
            }
            // Router keys are ours, not the upstream's; a backend key replaces the client's.
            if (HttpHeaderNames.AUTHORIZATION.contentEqualsIgnoreCase(name)
                    && (backendAuth != null || credentialSource == AuthResult.CredentialSource.AUTHORIZATION)) {
                continue;
            }
            if (X_API_KEY.contentEqualsIgnoreCase(name) && credentialSource == AuthResult.CredentialSource.X_API_KEY) {
                continue;
            }
            out.add(name, e.getValue());
        }
        DispatchPlan pl = plan;
        if (pl != null && !fellBack) {
            for (Map.Entry<String, String> e : pl.upstreamHeaders().entrySet()) {
                out.set(e.getKey(), e.getValue());
            }
        }
        out.set(HttpHeaderNames.HOST, b.resources().endpoint.hostHeader());
        if (backendAuth != null) {
            out.set(HttpHeaderNames.AUTHORIZATION, backendAuth);
        }
        out.setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
        return new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, request.method(),
                b.resources().endpoint.target(client.path(), client.rawQuery()), body.retainedDuplicate(), out,
                EmptyHttpHeaders.INSTANCE);
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
        Backend b = backendOrThrow();
        int code = head.status().code();
        if (head.decoderResult().isFailure() || code < 100 || code > 599 || code == 101) {
            ReferenceCountUtil.release(head);
            upstreamFailedBeforeHead(b, "The upstream backend sent an invalid response.");
            return;
        }
        if (code < 200) {
            // 1xx interim answer (we never send Expect): skip it and its empty end marker.
            informational = true;
            ReferenceCountUtil.release(head);
            return;
        }
        b.resources().meters.headLatency(service.options.nanoClock().getAsLong() - attemptStart);
        b.resources().meters.request(StatusClass.of(code));
        if (code >= 500) {
            b.resources().breaker.onFailure(permit);
        } else {
            b.resources().breaker.onSuccess(permit);
        }
        permit = CircuitBreaker.NO_PERMIT;
        if (pinned() && code >= 300) {
            // Whether this is the plan's refusal, a retry, a fallback or a relay depends on the body.
            errorHead = head;
            errorBody = clientCh.alloc().compositeBuffer();
            return;
        }
        if ((code == 502 || code == 503) && takeRetry()) {
            ReferenceCountUtil.release(head);
            cancelTimeout();
            dropUpstream(); // the rest of this answer is unread: the connection cannot be reused
            setLastError(code, "The upstream backend answered " + code + ".");
            scheduleRetry(b, code == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
            return;
        }
        commit(head, code);
    }

    private void commit(HttpResponse head, int code) {
        committed = true;
        status = code;
        HttpHeaders h = head.headers();
        ParsedRequest p = parsed;
        boolean streaming = (p != null && p.stream()) || isEventStream(h.get(HttpHeaderNames.CONTENT_TYPE));
        if (streaming) {
            // For a stream the timeout bounds the time to the first byte only.
            cancelTimeout();
        }
        upstreamKeepAlive = HttpUtil.isKeepAlive(head);
        HopByHop.stripResponse(h);
        UntrustedHeaders.strip(h); // no x-dynamo-* header is ever echoed to the client
        decorate(h);
        head.setProtocolVersion(HttpVersion.HTTP_1_1);
        closeClient = client.closeAfterResponse();
        boolean hasBody = code != 204 && code != 304;
        if (hasBody && !h.contains(HttpHeaderNames.CONTENT_LENGTH)) {
            if (request.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                closeClient = true; // no chunked coding for HTTP/1.0: the close ends the body
            } else {
                h.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
            }
        }
        if (closeClient) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        clientCh.write(head, clientCh.voidPromise());
    }

    /** Continuum's routing headers: the routing path always, identities only when the client sent x-backend. */
    private void decorate(HttpHeaders h) {
        if (client.route() == ProxyRoute.MODELS) {
            return;
        }
        DispatchPlan pl = plan;
        h.set(X_CONTINUUM_ROUTING_PATH, pl == null ? ROUTING_PATH_UNIFIED
                : fellBack ? ROUTING_PATH_FALLBACK : pl.routingPath());
        if (request.headers().contains(X_BACKEND)) {
            Backend b = backend;
            if (b != null) {
                h.set(X_CONTINUUM_BACKEND, b.name());
            }
            if (pl != null && !fellBack) {
                for (Map.Entry<String, String> e : pl.disclosedHeaders().entrySet()) {
                    h.set(e.getKey(), e.getValue());
                }
            }
        }
    }

    /** Collects an error body on the plan's path; the decision comes with its last chunk. */
    private void collectError(HttpContent c, CompositeByteBuf held) {
        boolean last = c instanceof LastHttpContent;
        boolean failed = c.decoderResult().isFailure();
        int room = DispatchPlan.MAX_INSPECTED_ERROR_BYTES - held.readableBytes();
        ByteBuf in = c.content();
        if (!failed && room > 0 && in.isReadable()) {
            held.addComponent(true, in.readRetainedSlice(Math.min(room, in.readableBytes())));
        }
        c.release();
        if (failed) {
            discardError();
            setLastError(502, "The upstream backend sent an invalid response.");
            failWithLastError();
        } else if (last) {
            decideError();
        }
    }

    private void decideError() {
        HttpResponse head = errorHead;
        CompositeByteBuf held = errorBody;
        DispatchPlan pl = plan;
        errorHead = null;
        errorBody = null;
        if (head == null || held == null || pl == null) {
            throw new IllegalStateException("no held error");
        }
        Backend b = backendOrThrow();
        int code = head.status().code();
        cancelTimeout();
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            if (HttpUtil.isKeepAlive(head)) {
                b.resources().pool.release(u); // the answer was read to its end
            } else {
                detachUpstream(u);
            }
        }
        if (held.toString(StandardCharsets.UTF_8).contains(pl.refusalMarker())) {
            held.release();
            ReferenceCountUtil.release(head);
            endPlan(DispatchPlan.Outcome.REFUSED);
            answer(OpenAiErrors.serviceUnavailable(pl.refusalCode(),
                    "The upstream refused the pinned prefill/decode pair; the request was not retried."));
            return;
        }
        if ((code == 502 || code == 503) && takeRetry()) {
            held.release();
            ReferenceCountUtil.release(head);
            setLastError(code, "The upstream backend answered " + code + ".");
            scheduleRetry(b, code == 502 ? RetryReason.STATUS_502 : RetryReason.STATUS_503);
            return;
        }
        ParsedRequest p = parsed;
        boolean stream = p != null && p.stream();
        if (stream && code < 500 && code != 429 && code != 408) {
            // A stream's other 4xx is the client's problem, not the path's: relay it as sent.
            endPlan(DispatchPlan.Outcome.FAILED);
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, head.status(), held,
                    head.headers(), EmptyHttpHeaders.INSTANCE);
            ReferenceCountUtil.release(head);
            HopByHop.stripResponse(r.headers());
            UntrustedHeaders.strip(r.headers());
            r.headers().remove(HttpHeaderNames.TRANSFER_ENCODING);
            r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, held.readableBytes());
            answer(r);
            return;
        }
        held.release();
        ReferenceCountUtil.release(head);
        setLastError(code >= 500 ? code : 502, "The upstream backend answered " + code + ".");
        pinnedFailure();
    }

    private void discardError() {
        CompositeByteBuf held = errorBody;
        errorBody = null;
        if (held != null) {
            held.release();
        }
        HttpResponse head = errorHead;
        errorHead = null;
        if (head != null) {
            ReferenceCountUtil.release(head);
        }
    }

    private static boolean isEventStream(@Nullable String contentType) {
        return contentType != null && contentType.regionMatches(true, 0, "text/event-stream", 0, 17);
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
        CompositeByteBuf held = errorBody;
        if (held != null) {
            collectError(c, held);
            return;
        }
        if (!committed) {
            c.release();
            return;
        }
        if (c.decoderResult().isFailure()) {
            // A chunked body cut short decodes as a failed last chunk: never relay it as a clean end.
            c.release();
            upstreamAbort();
            return;
        }
        if (c instanceof LastHttpContent) {
            cancelTimeout();
            ChannelFuture f = clientCh.writeAndFlush(c);
            finishRelayed(f);
            return;
        }
        clientCh.write(c, clientCh.voidPromise());
        if (!clientCh.isWritable()) {
            pauseUpstream();
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
        Channel u = upstream;
        if (finished || u == null) {
            return;
        }
        upstream = null;
        if (committed) {
            upstreamAbort();
            return;
        }
        Backend b = backendOrThrow();
        if (errorHead != null) {
            // A held error answer cut before its end: the head was counted, the body says nothing more.
            discardError();
            setLastError(502, "The upstream backend closed the connection mid-answer.");
            failWithLastError();
            return;
        }
        if (upstreamReused && !staleRetried) {
            // A pooled connection the upstream had already given up on: one fresh try, uncounted.
            staleRetried = true;
            b.resources().pool.connect(loop, this);
            return;
        }
        if (!requestWritten) {
            onConnectFailed(new IOException("upstream closed before the request was sent"));
            return;
        }
        // The request may have been processed: a 502, not a retry.
        upstreamFailedBeforeHead(b, "The upstream backend closed the connection before responding.");
    }

    @Override
    public void onUpstreamError(Throwable cause) {
        if (log.isDebugEnabled()) {
            Backend b = backend;
            log.debug("backend {}: upstream error: {}", b == null ? "?" : b.name(), LogSafe.escape(cause));
        }
    }

    @Override
    public void onUpstreamIdle() {
        // Before the head, the request timeout governs (a long generation may be silent). After it,
        // an upstream silent for the whole idle timeout mid-response is hung: cut the response.
        if (committed && !finished) {
            if (log.isDebugEnabled()) {
                log.debug("backend {}: no data for the idle timeout mid-response, aborting", backendOrThrow().name());
            }
            upstreamAbort();
        }
    }

    private void upstreamFailedBeforeHead(Backend b, String message) {
        b.resources().breaker.onFailure(permit);
        permit = CircuitBreaker.NO_PERMIT;
        b.resources().meters.request(StatusClass.ERROR);
        setLastError(502, message);
        failWithLastError();
    }

    private void onTimeout() {
        timeout = null;
        if (finished) {
            return;
        }
        Backend b = backendOrThrow();
        if (committed) {
            upstreamAbort();
            return;
        }
        if (errorBody != null) {
            discardError(); // the head was already counted
        } else {
            b.resources().breaker.onFailure(permit);
            permit = CircuitBreaker.NO_PERMIT;
            b.resources().meters.request(StatusClass.ERROR);
        }
        if (pinned()) {
            pinnedFailure();
            return;
        }
        Duration t = b.config().effectiveTimeout(state.config.server());
        answer(OpenAiErrors.gatewayTimeout("The upstream backend did not answer within " + t.toMillis() + " ms."));
    }

    // ---------------------------------------------------------------- backpressure and client events

    private void pauseUpstream() {
        Channel u = upstream;
        if (u != null && u.config().isAutoRead()) {
            u.config().setAutoRead(false);
            service.countPause();
        }
    }

    @Override
    public void clientWritabilityChanged() {
        Channel u = upstream;
        if (!finished && u != null && clientCh.isWritable() && !u.config().isAutoRead()) {
            u.config().setAutoRead(true); // also issues a read
        }
    }

    @Override
    public void clientClosed() {
        if (finished) {
            return;
        }
        finished = true;
        cancelTimeout();
        cancelBackoff();
        if (committed) {
            service.metrics.streamAborted(StreamSide.CLIENT);
        }
        abandonAttempt(); // the upstream is never pooled: its response is unfinished
        releaseRequest();
    }

    /** Closes the current attempt's upstream connection (not pooled), if any. */
    private void dropUpstream() {
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            detachUpstream(u);
        }
    }

    /**
     * Abandons the current attempt without judging the backend: its connection is dropped and its breaker
     * permit returned as ignored.
     */
    private void abandonAttempt() {
        dropUpstream();
        Backend b = backend;
        if (b != null && permit != CircuitBreaker.NO_PERMIT) {
            b.resources().breaker.onIgnored(permit);
            permit = CircuitBreaker.NO_PERMIT;
        }
    }

    // ---------------------------------------------------------------- endings

    private void finishRelayed(ChannelFuture lastWrite) {
        endPlan(DispatchPlan.Outcome.SERVED);
        finished = true;
        Channel u = upstream;
        upstream = null;
        if (u != null) {
            if (upstreamKeepAlive) {
                backendOrThrow().resources().pool.release(u);
            } else {
                detachUpstream(u);
            }
        }
        releaseRequest();
        client.responseComplete(status, closeClient, lastWrite);
    }

    /** The upstream failed after the head went out: the client's response is cut (connection closed). */
    private void upstreamAbort() {
        endPlan(DispatchPlan.Outcome.FAILED);
        finished = true;
        cancelTimeout();
        dropUpstream();
        service.metrics.streamAborted(StreamSide.UPSTREAM);
        releaseRequest();
        ChannelFuture closed = clientCh.close();
        client.responseComplete(status, true, closed);
    }

    private void failWithLastError() {
        if (pinned()) {
            pinnedFailure();
            return;
        }
        answer(switch (lastErrorStatus) {
            case 503 -> OpenAiErrors.serviceUnavailable("service_unavailable", lastErrorMessage);
            case 504 -> OpenAiErrors.gatewayTimeout(lastErrorMessage);
            default -> OpenAiErrors.badGateway(lastErrorMessage);
        });
    }

    /** Answers with a complete response of our own (error or model list); only before commit. */
    private void answer(FullHttpResponse response) {
        if (finished || committed) {
            response.release();
            return;
        }
        finished = true;
        committed = true;
        cancelTimeout();
        cancelBackoff();
        abandonAttempt();
        if (plan != null) {
            decorate(response.headers());
        }
        releaseRequest();
        boolean close = client.closeAfterResponse();
        if (close) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        status = response.status().code();
        ChannelFuture f = clientCh.writeAndFlush(response);
        client.responseComplete(status, close, f);
    }

    private void respondModels() {
        Map<String, String> models = new TreeMap<>();
        ApiKeyConfig k = key;
        for (Backend b : state.clientFacing) {
            if (!b.resources().health.state().routable()) {
                continue;
            }
            if (k != null && !k.allowedBackends().isEmpty() && !k.allowedBackends().contains(b.name())) {
                continue;
            }
            List<String> ids = b.config().models().isEmpty() ? b.resources().health.reportedModels()
                    : b.config().models();
            for (String id : ids) {
                if (k == null || k.allowedModels().isEmpty() || k.allowedModels().contains(id)) {
                    models.putIfAbsent(id, b.name());
                }
            }
        }
        ByteBuf buf = clientCh.alloc().buffer();
        try (JsonGenerator g = JSON.createGenerator((java.io.OutputStream) new ByteBufOutputStream(buf))) {
            g.writeStartObject();
            g.writeStringField("object", "list");
            g.writeArrayFieldStart("data");
            for (Map.Entry<String, String> e : models.entrySet()) {
                g.writeStartObject();
                g.writeStringField("id", e.getKey());
                g.writeStringField("object", "model");
                g.writeNumberField("created", state.createdEpochSeconds);
                g.writeStringField("owned_by", e.getValue());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            buf.release();
            throw new UncheckedIOException(e);
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, buf);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, buf.readableBytes());
        answer(r);
    }

    // ---------------------------------------------------------------- helpers

    private void setLastError(int statusCode, String message) {
        lastErrorStatus = statusCode;
        lastErrorMessage = message;
    }

    private String modelName() {
        ParsedRequest p = parsed;
        return p == null ? "" : p.model();
    }

    private Backend backendOrThrow() {
        Backend b = backend;
        if (b == null) {
            throw new IllegalStateException("no backend selected");
        }
        return b;
    }

    private static void detachUpstream(Channel u) {
        UpstreamHandler h = u.pipeline().get(UpstreamHandler.class);
        if (h != null) {
            h.detach();
        }
        u.close();
    }

    private void cancelTimeout() {
        ScheduledFuture<?> t = timeout;
        if (t != null) {
            t.cancel(false);
            timeout = null;
        }
    }

    private void cancelBackoff() {
        ScheduledFuture<?> t = backoff;
        if (t != null) {
            t.cancel(false);
            backoff = null;
        }
    }

    private void releaseRequest() {
        discardError();
        endPlan(DispatchPlan.Outcome.ABANDONED);
        if (!requestReleased) {
            requestReleased = true;
            request.release();
            if (ownsBody) {
                body.release();
            }
        }
    }
}
