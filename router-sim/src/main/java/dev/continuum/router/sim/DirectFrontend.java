package dev.continuum.router.sim;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * An emulator of {@code dynamo.frontend --router-mode direct}, written from upstream's direct mode (not from
 * the router): it resolves the {@code x-dynamo-*} pins (and their older aliases) against a simulated fleet,
 * answers a chat completion buffered or as SSE tokens at a configurable rate (text, or a tool call when tools are
 * offered: {@link ChatAnswer}) and a Responses request natively ({@link ResponsesAnswer}), records the last
 * requests it accepted, and counts what each pinned worker received.
 *
 * <p>Pins are read as upstream reads them: decimal u64 instance IDs and u32 ranks, an unparsable value
 * (hexadecimal included) silently counting as absent; the {@code x-dynamo-*} name wins over its alias.
 * Refusals carry upstream's exact texts ({@link #WORKER_ID_ERROR}, {@link #PREFILL_ID_ERROR}). An ID that is not
 * in the fleet, or a worker of the wrong role, is refused with {@link #UNKNOWN_WORKER_ERROR}, this emulator's
 * own wording (upstream's text for that case is not in the spec). All refusals use status 500, as a pipeline
 * error of the frontend.
 *
 * <p>Each served request is reported to an {@link InFlight} listener (the {@link SimFleet}'s workers): started on
 * its decode and prefill workers, finished on the prefill worker at the first token and on the decode worker at
 * the last one or when the client goes away. A buffered answer is held as long as a streamed one would take.
 */
public final class DirectFrontend implements AutoCloseable {
    public static final String WORKER_ID_ERROR = "Worker ID required (--direct-route) but none found in request. "
            + "Expected decode_worker_id or backend_instance_id to be set by external router (e.g., EPP).";
    public static final String PREFILL_ID_ERROR = "Prefill worker ID required in Direct routing mode but none "
            + "found in request. Expected prefill_worker_id to be set via x-prefill-instance-id header by external "
            + "router (e.g., EPP).";
    public static final String UNKNOWN_WORKER_ERROR = "No instance with the requested ID serves this request";

    /**
     * A simulated worker as the frontend knows it.
     *
     * @param group the model group it serves (namespace and model, for instance): a decode pin needs a prefill pin
     *              only when its group has a prefill pool, so an aggregated pool can sit beside a disaggregated one
     */
    public record Worker(long instanceId, Role role, int dpSize, String group) {
        public Worker {
            if (dpSize < 1) {
                throw new IllegalArgumentException("dpSize: " + dpSize + " (expected: >= 1)");
            }
        }

        /** A worker of the one group every worker shares. */
        public Worker(long instanceId, Role role, int dpSize) {
            this(instanceId, role, dpSize, "");
        }
    }

    public enum Role { PREFILL, DECODE, AGGREGATED }

    /**
     * Told when a served request starts and ends on a worker, so a simulated worker's published load follows
     * its traffic. Called on the frontend's event loop; implementations must not block.
     */
    public interface InFlight {
        InFlight NONE = new InFlight() {
            @Override
            public void started(long instanceId) {
            }

            @Override
            public void finished(long instanceId) {
            }
        };

        void started(long instanceId);

        void finished(long instanceId);
    }

    /**
     * Runs the requests the frontend accepted: decides when each may emit its next token (slots, queueing, a
     * stalled worker) and sees each token and end. Called on the frontend's event loop; must not block.
     */
    public interface Engine {
        /**
         * A request was accepted for {@code decode} (and {@code prefill} when pinned).
         *
         * @param decodeRank  the pinned rank, or -1
         * @param prefillRank the pinned prefill rank, or -1
         * @param promptTokens the prompt's size as the simulator estimates it
         */
        Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank, int promptTokens);

        /** As {@link #accept(long, int, Long, int, int)}, for an engine that reads the request's {@code body}. */
        default Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank, int promptTokens,
                String body) {
            return accept(decode, decodeRank, prefill, prefillRank, promptTokens);
        }

        /**
         * As {@link #accept(long, int, Long, int, int, String)}, with the router's decision id the request carried
         * ({@code x-continuum-decision-id}), or -1: an engine that counts per request keys its figures by it.
         */
        default Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank, int promptTokens,
                String body, long decisionId) {
            return accept(decode, decodeRank, prefill, prefillRank, promptTokens, body);
        }
    }

    /** One accepted request as its engine tracks it. */
    public interface Ticket {
        /** Runs {@code step} once, on any thread, when the request may emit its next token (maybe right away). */
        void next(Runnable step);

        /** A token was emitted; the first one ends the prefill phase. */
        void token();

        /** The request ended: answered, or its client went away. Idempotent. */
        void end();
    }

    /** The engine of a bare frontend: no slots, no queue; starts and ends are told to an {@link InFlight}. */
    static Engine immediate(InFlight listener) {
        return (decode, decodeRank, prefill, prefillRank, promptTokens) -> {
            listener.started(decode);
            if (prefill != null) {
                listener.started(prefill);
            }
            return new Ticket() {
                private boolean prefillDone = prefill == null;
                private boolean ended;

                @Override
                public void next(Runnable step) {
                    step.run();
                }

                @Override
                public void token() {
                    endPrefill();
                }

                @Override
                public void end() {
                    if (!ended) {
                        ended = true;
                        endPrefill();
                        listener.finished(decode);
                    }
                }

                /** Prefill holds the request only until its first token: the decode worker takes it from there. */
                private void endPrefill() {
                    Long p = prefill;
                    if (!prefillDone && p != null) {
                        prefillDone = true;
                        listener.finished(p);
                    }
                }
            };
        };
    }

    private final EventLoopGroup group;
    private final AtomicReference<Map<Long, Worker>> fleet;
    private final Map<Long, AtomicLong> served = new ConcurrentHashMap<>();
    /** The last {@link #MAX_RECEIVED} requests served, oldest first. */
    private final java.util.Deque<Received> received = new java.util.concurrent.ConcurrentLinkedDeque<>();
    private static final int MAX_RECEIVED = 256;
    /** The last {@link #MAX_RECORDED} accepted chat requests, oldest first. */
    private final ArrayDeque<ReceivedChat> receivedChats = new ArrayDeque<>();
    private volatile Engine engine = immediate(InFlight.NONE);
    private volatile @Nullable TokenDataCheck tokenDataCheck;
    /** Set once, right after bind, before {@link #start} returns. */
    private @Nullable Channel channel;

    private DirectFrontend(EventLoopGroup group, List<Worker> workers) {
        this.group = group;
        this.fleet = new AtomicReference<>(index(workers));
    }

    /**
     * @param chunks       SSE token events per streamed answer (then {@code [DONE]})
     * @param chunkDelayMs delay between two events
     */
    public static DirectFrontend start(String host, int port, List<Worker> workers, int chunks, long chunkDelayMs)
            throws InterruptedException {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        DirectFrontend frontend = new DirectFrontend(group, workers);
        ChannelFuture bound = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new Handler(frontend, chunks, chunkDelayMs));
                    }
                })
                .bind(host, port).await();
        if (!bound.isSuccess()) {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS); // or its thread keeps a failed process alive
            throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " + bound.cause().getMessage(),
                    bound.cause());
        }
        frontend.channel = bound.channel();
        return frontend;
    }

    private static Map<Long, Worker> index(List<Worker> workers) {
        return workers.stream().collect(Collectors.toUnmodifiableMap(Worker::instanceId, Function.identity()));
    }

    /** Replaces the fleet the pins are resolved against (workers joining or leaving). */
    public void workers(List<Worker> workers) {
        fleet.set(index(workers));
    }

    /** Where request starts and ends are reported (the simulated workers); replaces the previous engine. */
    public void inFlight(InFlight listener) {
        this.engine = immediate(listener);
    }

    /** The engine that paces the accepted requests (a {@link SimFleet}'s workers); replaces the previous one. */
    public void engine(Engine next) {
        this.engine = next;
    }

    /**
     * From now on, a chat body carrying {@code nvext.token_data} is served only when the IDs equal
     * {@code reference}'s tokenization of that body (else 400); the returned check counts what it saw.
     */
    public TokenDataCheck verifyTokenData(TokenDataReference reference) {
        TokenDataCheck check = new TokenDataCheck(reference);
        tokenDataCheck = check;
        return check;
    }

    /** One chat completion the emulator accepted: its headers (lower-case names) and body, as received. */
    public record Received(Map<String, String> headers, String body) {
    }

    /** The last chat completions accepted (at most 256), oldest first. */
    public List<Received> received() {
        return List.copyOf(received);
    }

    private void record(HttpHeaders h, String body) {
        Map<String, String> headers = new java.util.LinkedHashMap<>();
        h.forEach(e -> headers.putIfAbsent(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue()));
        received.addLast(new Received(Map.copyOf(headers), body));
        while (received.size() > MAX_RECEIVED) {
            received.pollFirst();
        }
    }

    /** How many accepted chat requests {@link #receivedChats} keeps. */
    public static final int MAX_RECORDED = 256;

    /**
     * The accepted chat requests (pins resolved), oldest first, up to {@link #MAX_RECORDED}: their bodies and
     * {@code nvext.token_data}, for a test to verify against an independent rendering and tokenization.
     */
    public List<ReceivedChat> receivedChats() {
        synchronized (receivedChats) {
            return List.copyOf(receivedChats);
        }
    }

    private void record(ReceivedChat chat) {
        synchronized (receivedChats) {
            if (receivedChats.size() == MAX_RECORDED) {
                receivedChats.removeFirst();
            }
            receivedChats.addLast(chat);
        }
    }

    /** Requests served with {@code instanceId} pinned (as decode or as prefill worker). */
    public long served(long instanceId) {
        AtomicLong n = served.get(instanceId);
        return n == null ? 0 : n.get();
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) bound().localAddress();
    }

    private Channel bound() {
        Channel c = channel;
        if (c == null) {
            throw new IllegalStateException("not started");
        }
        return c;
    }

    @Override
    public void close() {
        bound().close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /** Decimal u64 (or u32 for ranks); anything else is absent, as upstream's {@code parse()} fallthrough. */
    static @Nullable Long pin(HttpHeaders h, String name, String alias, boolean rank) {
        String v = h.get(name);
        if (v == null) {
            v = h.get(alias);
        }
        if (v == null) {
            return null;
        }
        try {
            long parsed = Long.parseUnsignedLong(v.trim());
            return rank && Long.compareUnsigned(parsed, 0xFFFF_FFFFL) > 0 ? null : parsed;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Decides one request: null to serve it, else the refusal text. */
    @Nullable String refusal(HttpHeaders h) {
        Map<Long, Worker> workers = java.util.Objects.requireNonNull(fleet.get(), "set in the constructor");
        Long decode = pin(h, "x-dynamo-worker-instance-id", "x-worker-instance-id", false);
        Long prefill = pin(h, "x-dynamo-prefill-instance-id", "x-prefill-instance-id", false);
        if (decode == null) {
            return WORKER_ID_ERROR;
        }
        Worker d = workers.get(decode);
        if (d == null || d.role() == Role.PREFILL) {
            return UNKNOWN_WORKER_ERROR;
        }
        boolean prefillPool = workers.values().stream()
                .anyMatch(w -> w.role() == Role.PREFILL && w.group().equals(d.group()));
        if (prefill == null && prefillPool) {
            return PREFILL_ID_ERROR;
        }
        if (prefill != null) {
            Worker p = workers.get(prefill);
            if (p == null || p.role() != Role.PREFILL) {
                return UNKNOWN_WORKER_ERROR;
            }
        }
        Long rank = pin(h, "x-dynamo-dp-rank", "x-dp-rank", true);
        if (rank != null && rank >= d.dpSize()) {
            return UNKNOWN_WORKER_ERROR;
        }
        served.computeIfAbsent(decode, k -> new AtomicLong()).incrementAndGet();
        if (prefill != null) {
            served.computeIfAbsent(prefill, k -> new AtomicLong()).incrementAndGet();
        }
        return null;
    }

    /** Releases nothing itself: {@link SimpleChannelInboundHandler} releases each aggregated request. */
    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final DirectFrontend frontend;
        private final int chunks;
        private final long chunkDelayMs;

        Handler(DirectFrontend frontend, int chunks, long chunkDelayMs) {
            this.frontend = frontend;
            this.chunks = chunks;
            this.chunkDelayMs = chunkDelayMs;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            String path = request.uri();
            if (request.method().equals(HttpMethod.GET)) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "{\"object\":\"list\",\"data\":[]}");
                return;
            }
            if (path.startsWith("/v1/responses")) {
                respondResponses(ctx, keepAlive, request);
                return;
            }
            if (!path.startsWith("/v1/chat/completions")) {
                respond(ctx, keepAlive, HttpResponseStatus.NOT_FOUND, "{\"error\":{\"message\":\"not found\"}}");
                return;
            }
            String refusal = frontend.refusal(request.headers());
            if (refusal != null) {
                respond(ctx, keepAlive, HttpResponseStatus.INTERNAL_SERVER_ERROR,
                        "{\"error\":{\"message\":\"" + refusal + "\",\"type\":\"internal_error\",\"code\":500}}");
                return;
            }
            TokenDataCheck check = frontend.tokenDataCheck;
            String wrongTokens = check == null ? null : check.refusal(request.content().toString(StandardCharsets.UTF_8));
            if (wrongTokens != null) {
                respond(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, "{\"error\":{\"message\":"
                        + DynamoJson.str(wrongTokens) + ",\"type\":\"invalid_request_error\",\"code\":400}}");
                return;
            }
            long decode = requirePin(request.headers(), "x-dynamo-worker-instance-id", "x-worker-instance-id");
            Long prefill = pin(request.headers(), "x-dynamo-prefill-instance-id", "x-prefill-instance-id", false);
            Long decodeRank = pin(request.headers(), "x-dynamo-dp-rank", "x-dp-rank", true);
            Long prefillRank = pin(request.headers(), "x-dynamo-prefill-dp-rank", "x-prefill-dp-rank", true);
            // About four bytes of JSON per token: enough for a prompt's KV to scale with the request's size.
            int promptTokens = Math.max(1, (request.content().readableBytes() + 3) / 4);
            String body = request.content().toString(StandardCharsets.UTF_8);
            long decisionId = AvoidableTokens.parseDecisionId(request.headers().get("x-continuum-decision-id"));
            Ticket ticket = frontend.engine.accept(decode, decodeRank == null ? -1 : decodeRank.intValue(), prefill,
                    prefillRank == null ? -1 : prefillRank.intValue(), promptTokens, body, decisionId);
            // A client that goes away mid-answer ends the request too; the close listener is removed on a normal
            // end so a long keep-alive connection does not collect one per request.
            AtomicReference<@Nullable ChannelFutureListener> onClose = new AtomicReference<>();
            Runnable done = once(() -> {
                ticket.end();
                ChannelFutureListener l = onClose.get();
                if (l != null) {
                    ctx.channel().closeFuture().removeListener(l);
                }
            });
            ChannelFutureListener l = f -> done.run();
            onClose.set(l);
            ctx.channel().closeFuture().addListener(l);
            frontend.record(request.headers(), body);
            frontend.record(ReceivedChat.of(body, decode));
            new Answer(ctx, keepAlive, ChatAnswer.of(body, promptTokens), ticket, done).nextStep(0);
        }

        /**
         * {@code /v1/responses}, which the frontend serves natively: pinned like a chat completion (the same
         * refusals), recorded, and answered at once ({@link ResponsesAnswer}).
         */
        private void respondResponses(ChannelHandlerContext ctx, boolean keepAlive, FullHttpRequest request) {
            String refusal = frontend.refusal(request.headers());
            if (refusal != null) {
                respond(ctx, keepAlive, HttpResponseStatus.INTERNAL_SERVER_ERROR,
                        "{\"error\":{\"message\":\"" + refusal + "\",\"type\":\"internal_error\",\"code\":500}}");
                return;
            }
            String body = request.content().toString(StandardCharsets.UTF_8);
            frontend.record(request.headers(), body);
            if (!ResponsesAnswer.streamed(body)) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, ResponsesAnswer.buffered());
                return;
            }
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
            HttpUtil.setTransferEncodingChunked(head, true);
            HttpUtil.setKeepAlive(head, keepAlive);
            ctx.write(head);
            ctx.write(new DefaultHttpContent(Unpooled.copiedBuffer(ResponsesAnswer.events(), StandardCharsets.UTF_8)));
            var written = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private void respondCompletion(ChannelHandlerContext ctx, boolean keepAlive, ChatAnswer answer) {
            if (!ctx.channel().isActive()) {
                return;
            }
            respond(ctx, keepAlive, HttpResponseStatus.OK, answer.completion(chunks));
        }

        /** The decode pin of a request {@link DirectFrontend#refusal} accepted: present by then. */
        private static long requirePin(HttpHeaders h, String name, String alias) {
            Long v = pin(h, name, alias, false);
            if (v == null) {
                throw new IllegalStateException(name + ": absent after the request was accepted");
            }
            return v;
        }

        /** Runs {@code action} on the first call only: a request ends once, by completion or by a close. */
        private static Runnable once(Runnable action) {
            java.util.concurrent.atomic.AtomicBoolean ran = new java.util.concurrent.atomic.AtomicBoolean();
            return () -> {
                if (ran.compareAndSet(false, true)) {
                    action.run();
                }
            };
        }

        /**
         * One answer, token by token: each token waits for its ticket (a queued request or a stalled worker emits
         * nothing, not even the response head), then {@code chunkDelayMs}. A buffered answer walks the same tokens
         * without writing them, so it takes as long as the streamed one and holds its worker meanwhile.
         */
        private final class Answer {
            private final ChannelHandlerContext ctx;
            private final boolean keepAlive;
            private final boolean stream;
            private final ChatAnswer answer;
            private final Ticket ticket;
            private final Runnable done;

            Answer(ChannelHandlerContext ctx, boolean keepAlive, ChatAnswer answer, Ticket ticket, Runnable done) {
                this.ctx = ctx;
                this.keepAlive = keepAlive;
                this.stream = answer.stream;
                this.answer = answer;
                this.ticket = ticket;
                this.done = done;
            }

            /** Asks the ticket for token {@code sent}; the step itself always runs on the channel's event loop. */
            void nextStep(int sent) {
                ticket.next(() -> {
                    try {
                        ctx.executor().execute(() -> step(sent));
                    } catch (java.util.concurrent.RejectedExecutionException e) {
                        done.run();
                    }
                });
            }

            private void step(int sent) {
                if (!ctx.channel().isActive()) {
                    done.run();
                    return;
                }
                if (sent == 0 && stream) {
                    HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
                    head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
                    HttpUtil.setTransferEncodingChunked(head, true);
                    HttpUtil.setKeepAlive(head, keepAlive);
                    ctx.writeAndFlush(head);
                }
                if (sent >= chunks) {
                    done.run();
                    if (!stream) {
                        respondCompletion(ctx, keepAlive, answer);
                        return;
                    }
                    ctx.write(new DefaultHttpContent(Unpooled.copiedBuffer(answer.finish(chunks) + "data: [DONE]\n\n",
                            StandardCharsets.UTF_8)));
                    var written = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    if (!keepAlive) {
                        written.addListener(ChannelFutureListener.CLOSE);
                    }
                    return;
                }
                ticket.token();
                if (stream) {
                    String data = answer.tool == null ? answer.tokenChunk(sent) : answer.toolChunk(sent);
                    ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("data: " + data + "\n\n",
                            StandardCharsets.UTF_8)));
                }
                if (chunkDelayMs > 0) {
                    ctx.executor().schedule(() -> nextStep(sent + 1), chunkDelayMs, TimeUnit.MILLISECONDS);
                } else {
                    nextStep(sent + 1);
                }
            }
        }

        private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
                String json) {
            FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.copiedBuffer(json, StandardCharsets.UTF_8));
            r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
            HttpUtil.setKeepAlive(r, keepAlive);
            var f = ctx.writeAndFlush(r);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
