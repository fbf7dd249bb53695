package dev.continuum.router.proxy.http;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.proxy.metrics.Endpoint;
import dev.continuum.router.proxy.ClientExchange;
import dev.continuum.router.proxy.OpenAiErrors;
import dev.continuum.router.proxy.ProxyRoute;
import dev.continuum.router.proxy.RelayControl;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of a client connection: routes each complete request (local route, proxy
 * route, 404/405), answers one request at a time in arrival order (pipelined requests wait in a
 * small queue; reading pauses when it is full), keeps the connection alive between requests, and
 * closes it when asked to (client, HTTP/1.0, idle timeout, graceful shutdown, rejected request).
 * It records {@code http_requests_total} and {@code http_request_duration_seconds} for every
 * request; a request whose client left before the end is recorded with status 499.
 *
 * <p>Buffers: a request handed to the proxy is owned and released by the proxy; a local-route
 * request is copied into a {@code byte[]} and released here at once; every other request
 * (404, 405, queued requests dropped on close) is released here. Responses written here are
 * released by the write.
 *
 * <p>Why this class is about 500 lines: it is one connection's request state machine (idle, one request in
 * flight with a queue of pipelined ones, closing after the current one, closed), and every Netty callback
 * here (read, writability, inactive, idle and shutdown events, exceptions) moves that one state. Split across
 * classes, each piece would need the same five fields and the transitions would no longer read in one place;
 * what is not a transition (request framing guards, body limits, timeouts, the rejection answers) already
 * lives in its own handler or class in this package.
 */
final class HttpRequestHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(HttpRequestHandler.class);
    private static final HttpMethod UNKNOWN_METHOD = new HttpMethod("UNKNOWN");
    /** nginx's "client closed request": recorded when the client leaves mid-request. */
    static final int CLIENT_CLOSED_REQUEST = 499;

    private final ServerContext server;
    private final IdleStateHandler idle;
    private final HeaderReadTimeoutHandler headTimeout;
    private final long maxBodyBytes;
    private final RequestBufferBudgetHandler budget;
    private final LingeringClose linger;
    private final ArrayDeque<Object> pending = new ArrayDeque<>(2);
    private @Nullable ChannelHandlerContext ctx;
    private @Nullable Inflight current;
    private RelayControl relay = RelayControl.NONE;
    private boolean closeAfterCurrent;
    private boolean readPaused;
    private boolean closed;

    HttpRequestHandler(ServerContext server, IdleStateHandler idle, HeaderReadTimeoutHandler headTimeout,
                       long maxBodyBytes, RequestBufferBudgetHandler budget, LingeringClose linger) {
        this.server = server;
        this.idle = idle;
        this.headTimeout = headTimeout;
        this.maxBodyBytes = maxBodyBytes;
        this.budget = budget;
        this.linger = linger;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
        if (server.closing) {
            closeAfterCurrent = true;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest) && !(msg instanceof RejectedRequest)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (closed) {
            ReferenceCountUtil.release(msg);
            return;
        }
        if (current == null && pending.isEmpty()) {
            process(msg);
            return;
        }
        pending.add(msg);
        if (pending.size() >= server.limits.maxPipelinedRequests() && !readPaused) {
            readPaused = true;
            ctx.channel().config().setAutoRead(false);
        }
    }

    private void process(Object msg) {
        if (msg instanceof RejectedRequest r) {
            reject(r);
            return;
        }
        FullHttpRequest req = (FullHttpRequest) msg;
        Target target = Target.parse(req.uri());
        boolean close = closeAfterCurrent || !HttpUtil.isKeepAlive(req)
                || req.protocolVersion().equals(HttpVersion.HTTP_1_0);
        Inflight in = new Inflight(req, target == null ? "" : target.path(), target == null ? null : target.query(),
                close, server.nanoClock.getAsLong());
        current = in;
        if (target == null) {
            in.respond(OpenAiErrors.badRequest("Invalid request target."));
            return;
        }
        LocalRoutes.Entry local = server.routes.find(target.path());
        if (local != null) {
            in.endpoint = local.endpoint();
            runLocal(in, local.route());
            return;
        }
        ProxyRoute route = server.proxy.route(target.path());
        if (route == null) {
            in.respond(OpenAiErrors.unknownRoute(req.method().name(), target.path()));
            return;
        }
        in.endpoint = route.endpoint();
        HttpMethod allowed = route == ProxyRoute.MODELS ? HttpMethod.GET : HttpMethod.POST;
        if (!req.method().equals(allowed)) {
            in.respond(RejectionResponses.inWireOf(route,
                    OpenAiErrors.methodNotAllowed(req.method().name(), target.path(), allowed.name())));
            return;
        }
        in.route = route;
        in.ownedByProxy = true;
        RelayControl r;
        try {
            r = server.proxy.handle(in);
        } catch (RuntimeException e) {
            // A bug, not a client error: never leave the connection hanging or the body leaking.
            log.error("proxy failed on {} {}", LogSafe.escape(req.method()), LogSafe.escape(target.path()), e);
            if (req.refCnt() > 0) {
                req.release();
            }
            in.done = true;
            current = null;
            closed = true;
            releasePending();
            ctxOrThrow().close();
            return;
        }
        if (current == in) {
            relay = r;
        }
    }

    static @Nullable ProxyRoute proxyRoute(String path) {
        return switch (path) {
            case "/v1/chat/completions" -> ProxyRoute.CHAT_COMPLETIONS;
            case "/v1/completions" -> ProxyRoute.COMPLETIONS;
            case "/v1/models" -> ProxyRoute.MODELS;
            default -> null;
        };
    }

    // ---------------------------------------------------------------- local routes

    private void runLocal(Inflight in, LocalRoute route) {
        FullHttpRequest req = in.request;
        Channel ch = channel();
        LocalRequest lr = new LocalRequest(req.method(), in.path, in.query, req.headers(),
                ByteBufUtil.getBytes(req.content()), remote(ch));
        in.releaseRequest();
        CompletableFuture<LocalResponse> f;
        try {
            f = route.blocking()
                    ? CompletableFuture.supplyAsync(() -> route.handle(lr), server.blockingExecutor)
                    .thenCompose(x -> x)
                    : route.handle(lr);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        if (f == null) {
            f = CompletableFuture.failedFuture(new NullPointerException("local route returned null"));
        }
        f.whenComplete((res, err) -> {
            if (ch.eventLoop().inEventLoop()) {
                finishLocal(in, res, err);
            } else {
                ch.eventLoop().execute(() -> finishLocal(in, res, err));
            }
        });
    }

    private void finishLocal(Inflight in, @Nullable LocalResponse res, @Nullable Throwable err) {
        if (in.done || current != in) {
            return; // the client left meanwhile
        }
        if (err != null || res == null) {
            log.warn("local route {} failed", LogSafe.escape(in.path), err);
            in.respond(OpenAiErrors.internalError());
            return;
        }
        StreamedBody stream = res.stream();
        if (stream != null) {
            startStream(in, res, stream);
            return;
        }
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(res.status()), Unpooled.wrappedBuffer(res.body()));
        for (Map.Entry<String, String> h : res.headers().entrySet()) {
            r.headers().set(h.getKey(), h.getValue());
        }
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, res.contentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, res.body().length);
        in.respond(r);
    }

    /**
     * A streamed local answer: the head now, the body as the route writes it, and the connection closed after it
     * (the stream may last hours; nothing pipelined behind it should wait that long). It is the connection's relay
     * while it runs, so a client close ends it, and a shutdown ends it too.
     */
    private void startStream(Inflight in, LocalResponse res, StreamedBody stream) {
        in.releaseRequest();
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(res.status()));
        for (Map.Entry<String, String> h : res.headers().entrySet()) {
            head.headers().set(h.getKey(), h.getValue());
        }
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, res.contentType())
                .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        ctxOrThrow().writeAndFlush(head);
        ChannelStreamSink sink = new ChannelStreamSink(channel(), last -> complete(in, res.status(), true, last));
        relay = sink;
        try {
            stream.start(sink);
        } catch (RuntimeException e) {
            log.warn("local stream {} failed to start", LogSafe.escape(in.path), e);
            sink.end();
        }
    }

    // ---------------------------------------------------------------- completion

    private void complete(Inflight in, int status, boolean close, ChannelFuture lastWrite) {
        if (in.done || current != in) {
            return;
        }
        in.done = true;
        server.metrics.recordHttp(in.request.method(), in.endpoint, status, server.nanoClock.getAsLong() - in.start);
        current = null;
        relay = RelayControl.NONE;
        budget.release(in.bodyBytes);
        idle.resetReadTimeout(); // the idle timeout counts from the end of the last response
        if (close || closeAfterCurrent) {
            closed = true;
            releasePending();
            lastWrite.addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (!pending.isEmpty()) {
            // Not re-entrant: the next request starts after this call stack unwinds.
            channel().eventLoop().execute(this::drainPending);
        } else if (readPaused) {
            readPaused = false;
            channel().config().setAutoRead(true);
        }
    }

    private void drainPending() {
        if (current != null || closed) {
            return;
        }
        Object next = pending.poll();
        if (readPaused && pending.size() < server.limits.maxPipelinedRequests()) {
            readPaused = false;
            channel().config().setAutoRead(true);
        }
        if (next != null) {
            process(next);
        }
    }

    /** A guard refused the request, maybe mid-upload: answer it, then drain the rest briefly and close. */
    private void reject(RejectedRequest r) {
        closed = true;
        releasePending();
        FullHttpResponse resp = RejectionResponses.inWireOf(routeOf(r.uri()), RejectionResponses.of(r.reason(),
                maxBodyBytes));
        HttpMethod method = r.method();
        server.ingressMetrics.rejected(r.reason());
        server.metrics.recordHttp(method == null ? UNKNOWN_METHOD : method, Endpoint.OTHER, r.status(), 0);
        ChannelHandlerContext c = ctxOrThrow();
        // The refused request's partial body goes now, not when the drain ends, and stops counting against the budget.
        if (c.pipeline().get(HttpObjectAggregator.class) != null) {
            c.pipeline().remove(HttpObjectAggregator.class);
        }
        budget.dropAssembling();
        linger.closeAfter(c.writeAndFlush(resp));
    }

    /** The proxy route {@code uri} names, or null (not decoded, not a target, no such route). */
    private @Nullable ProxyRoute routeOf(@Nullable String uri) {
        Target t = uri == null ? null : Target.parse(uri);
        return t == null ? null : server.proxy.route(t.path());
    }

    private void releasePending() {
        Object o;
        while ((o = pending.poll()) != null) {
            ReferenceCountUtil.release(o);
        }
    }

    // ---------------------------------------------------------------- connection events

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        relay.clientWritabilityChanged();
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        closed = true;
        Inflight in = current;
        current = null;
        if (in != null && !in.done) {
            in.done = true;
            RelayControl r = relay;
            relay = RelayControl.NONE;
            r.clientClosed();
            in.releaseRequest();
            server.metrics.recordHttp(in.request.method(), in.endpoint, CLIENT_CLOSED_REQUEST,
                    server.nanoClock.getAsLong() - in.start);
        }
        releasePending();
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            // Idle means no request in flight and none arriving: a long upstream wait is not idle.
            if (idle()) {
                ctx.close();
            }
            return;
        }
        if (evt == ShutdownEvent.INSTANCE) {
            closeAfterCurrent = true;
            if (relay instanceof ChannelStreamSink stream) {
                stream.end(); // a stream never ends by itself: the drain would wait out its grace period
            }
            if (idle()) {
                ctx.close();
            }
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    private boolean idle() {
        return current == null && pending.isEmpty() && !headTimeout.receiving();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (OutOfMemory.in(cause)) {
            outOfMemory(ctx, cause);
            return;
        }
        if (log.isDebugEnabled()) {
            log.debug("closing {}: {}", ctx.channel(), LogSafe.escape(cause));
        }
        ctx.close();
    }

    /**
     * Memory ran out while reading or answering on this connection (Netty's pooled direct buffers, most
     * likely): never a silent reset. Counted, logged at WARN the first time, and answered 503 when no
     * response has started (that answer needs little memory; if even it fails, the write's failure closes).
     */
    private void outOfMemory(ChannelHandlerContext ctx, Throwable cause) {
        server.ingressMetrics.outOfMemory();
        if (server.outOfMemoryLogged.compareAndSet(false, true)) {
            log.warn("out of memory serving {}: {} (logged once; continuum_ingress_out_of_memory_total counts each;"
                    + " lower server.max_buffered_request_size or raise -XX:MaxDirectMemorySize)",
                    ctx.channel(), cause.toString());
        } else if (log.isDebugEnabled()) {
            log.debug("out of memory serving {}: {}", ctx.channel(), cause.toString());
        }
        if (!closed && current == null) {
            reject(new RejectedRequest(Rejection.OUT_OF_MEMORY, null, null));
        } else {
            ctx.close();
        }
    }

    private ChannelHandlerContext ctxOrThrow() {
        ChannelHandlerContext c = ctx;
        if (c == null) {
            throw new IllegalStateException("handler not added");
        }
        return c;
    }

    private Channel channel() {
        return ctxOrThrow().channel();
    }

    private static @Nullable InetSocketAddress remote(Channel ch) {
        return ch.remoteAddress() instanceof InetSocketAddress a ? a : null;
    }

    /** The request target split into raw path and raw query; origin-form or absolute-form only. */
    record Target(String path, @Nullable String query) {
        static @Nullable Target parse(String uri) {
            String rest = uri;
            if (!rest.startsWith("/")) {
                int scheme = rest.indexOf("://");
                if (scheme <= 0) {
                    return null;
                }
                int slash = rest.indexOf('/', scheme + 3);
                rest = slash < 0 ? "/" : rest.substring(slash);
            }
            int q = rest.indexOf('?');
            int hash = rest.indexOf('#');
            if (hash >= 0) {
                rest = rest.substring(0, hash);
            }
            return q < 0 || (hash >= 0 && q > hash) ? new Target(rest, null)
                    : new Target(rest.substring(0, q), rest.substring(q + 1));
        }
    }

    /** One request on this connection; the proxy sees it as its {@link ClientExchange}. */
    private final class Inflight implements ClientExchange {
        final FullHttpRequest request;
        final String path;
        final @Nullable String query;
        final boolean close;
        final long start;
        /** Counted against the buffer budget until this request's response ends. */
        final long bodyBytes;
        Endpoint endpoint = Endpoint.OTHER;
        @Nullable ProxyRoute route;
        boolean ownedByProxy;
        boolean requestReleased;
        boolean done;

        Inflight(FullHttpRequest request, String path, @Nullable String query, boolean close, long start) {
            this.request = request;
            this.path = path;
            this.query = query;
            this.close = close;
            this.start = start;
            this.bodyBytes = request.content().readableBytes();
        }

        @Override
        public Channel channel() {
            return HttpRequestHandler.this.channel();
        }

        @Override
        public FullHttpRequest request() {
            return request;
        }

        @Override
        public ProxyRoute route() {
            ProxyRoute r = route;
            if (r == null) {
                throw new IllegalStateException("not a proxy route");
            }
            return r;
        }

        @Override
        public String path() {
            return path;
        }

        @Override
        public @Nullable String rawQuery() {
            return query;
        }

        @Override
        public @Nullable InetSocketAddress remoteAddress() {
            return remote(channel());
        }

        @Override
        public boolean closeAfterResponse() {
            return close || closeAfterCurrent || server.closing;
        }

        @Override
        public void responseComplete(int status, boolean closeConnection, ChannelFuture lastWrite) {
            complete(this, status, closeConnection, lastWrite);
        }

        /** Answers with a complete response of ours; releases the request if still held. */
        void respond(FullHttpResponse response) {
            releaseRequest();
            boolean c = closeAfterResponse();
            if (c) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            int status = response.status().code();
            ChannelFuture f = ctxOrThrow().writeAndFlush(response);
            complete(this, status, c, f);
        }

        void releaseRequest() {
            if (!ownedByProxy && !requestReleased) {
                requestReleased = true;
                request.release();
            }
        }
    }
}
