package dev.continuum.router.testing;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
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
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A real OpenAI-wire backend on a loopback port for tests: {@code GET /v1/models} (also the
 * health answer), {@code GET /health}, and {@code POST /v1/chat/completions},
 * {@code POST /v1/completions}, {@code POST /v1/embeddings}, {@code POST /v1/rerank} and
 * {@code POST /v1/responses} answered by scripted {@link Reply replies}. Every request is
 * recorded. {@link #stop()} closes the listener and every connection (connections are then
 * refused), {@link #restart()} binds the same port again. HTTP/1.1 keep-alive is honoured, so the
 * router's connection pool is exercised.
 *
 * <p>Buffers: requests are aggregated and released by the handler after they are recorded;
 * responses are written (and released) by Netty.
 */
public final class TestUpstream implements AutoCloseable {
    private final String name;
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    private final ConcurrentLinkedQueue<Reply> queued = new ConcurrentLinkedQueue<>();
    private final CopyOnWriteArrayList<RecordedRequest> recorded = new CopyOnWriteArrayList<>();
    private final BlockingQueue<StreamHandle> streams = new LinkedBlockingQueue<>();
    private final AtomicInteger connectionsAccepted = new AtomicInteger();
    private volatile List<String> models = List.of("test-model");
    private volatile int healthStatus = 200;
    private volatile Reply defaultReply = Reply.echo();
    private volatile @Nullable Channel serverChannel;
    private volatile int port;
    private final @Nullable SslContext tls;

    private TestUpstream(String name, @Nullable SslContext tls) {
        this.name = name;
        this.tls = tls;
    }

    /** Starts an upstream named {@code name} (the name appears in echo replies) on a free port. */
    public static TestUpstream start(String name) {
        TestUpstream upstream = new TestUpstream(name, null);
        upstream.bind(0);
        return upstream;
    }

    /** Like {@link #start(String)}, speaking HTTPS with {@code certificate}. */
    public static TestUpstream startTls(String name, TestCertificate certificate) {
        try {
            SslContext ctx = SslContextBuilder.forServer(certificate.key(), certificate.certificate())
                    .sslProvider(SslProvider.JDK).build();
            TestUpstream upstream = new TestUpstream(name, ctx);
            upstream.bind(0);
            return upstream;
        } catch (javax.net.ssl.SSLException e) {
            throw new IllegalStateException(e);
        }
    }

    public String name() {
        return name;
    }

    public int port() {
        return port;
    }

    /** {@code http://127.0.0.1:<port>} ({@code https} for a TLS upstream). */
    public URI baseUrl() {
        return URI.create((tls != null ? "https" : "http") + "://127.0.0.1:" + port);
    }

    /** The ids {@code GET /v1/models} lists. */
    public TestUpstream models(String... ids) {
        this.models = List.of(ids);
        return this;
    }

    /** What {@code GET /v1/models} and {@code GET /health} answer: 200 (normal), 503 (warming up), 500... */
    public TestUpstream healthStatus(int status) {
        this.healthStatus = status;
        return this;
    }

    /** The reply used when the queue is empty. */
    public TestUpstream defaultReply(Reply reply) {
        this.defaultReply = reply;
        return this;
    }

    /** The next completion request gets {@code reply} (first in, first out). */
    public TestUpstream enqueue(Reply reply) {
        queued.add(reply);
        return this;
    }

    /** Every request received so far, health probes included. */
    public List<RecordedRequest> requests() {
        return List.copyOf(recorded);
    }

    /** The completion requests ({@code POST}) received so far. */
    public List<RecordedRequest> completionRequests() {
        return requests(r -> r.method().equals("POST"));
    }

    public List<RecordedRequest> requests(Predicate<RecordedRequest> filter) {
        List<RecordedRequest> out = new ArrayList<>();
        for (RecordedRequest r : recorded) {
            if (filter.test(r)) {
                out.add(r);
            }
        }
        return out;
    }

    public int completionCount() {
        return completionRequests().size();
    }

    /** TCP connections accepted since start (a pooled client reuses them). */
    public int connectionsAccepted() {
        return connectionsAccepted.get();
    }

    public void clearRecorded() {
        recorded.clear();
    }

    /** The next {@link Reply#controlledStream()} or {@link Reply#bulkStream} response opened. */
    public StreamHandle awaitStream(Duration timeout) throws InterruptedException {
        StreamHandle h = streams.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (h == null) {
            throw new AssertionError(name + ": no stream opened within " + timeout);
        }
        return h;
    }

    /** Closes the listener and every open connection: new connections are refused. */
    public void stop() {
        Channel ch = serverChannel;
        if (ch != null) {
            ch.close().syncUninterruptibly();
            serverChannel = null;
        }
        connections.close().awaitUninterruptibly();
    }

    /** Listens again on the same port after {@link #stop()}. */
    public void restart() {
        if (serverChannel == null) {
            bind(port);
        }
    }

    @Override
    public void close() {
        stop();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private void bind(int wanted) {
        ServerBootstrap b = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                // Small marks: writability follows the socket closely, which backpressure tests observe.
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(16 * 1024, 32 * 1024))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connectionsAccepted.incrementAndGet();
                        connections.add(ch);
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024 * 1024),
                                new UpstreamHandler());
                    }
                });
        Channel ch = b.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), wanted)).syncUninterruptibly()
                .channel();
        serverChannel = ch;
        port = ((InetSocketAddress) ch.localAddress()).getPort();
    }

    private RecordedRequest record(FullHttpRequest req) {
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : req.headers()) {
            headers.computeIfAbsent(e.getKey().toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(e.getValue());
        }
        RecordedRequest r = new RecordedRequest(req.method().name(), req.uri(), headers,
                req.content().toString(StandardCharsets.UTF_8));
        recorded.add(r);
        return r;
    }

    /** Releases each aggregated request after recording it (SimpleChannelInboundHandler). */
    private final class UpstreamHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
            RecordedRequest r = record(req);
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            String path = r.path();
            if (req.method().equals(HttpMethod.GET) && (path.equals("/v1/models") || path.equals("/health"))) {
                if (healthStatus != 200) {
                    sendFull(ctx, healthStatus, "application/json",
                            "{\"error\":{\"message\":\"health " + healthStatus + "\"}}", Map.of(), keepAlive);
                } else if (path.equals("/health")) {
                    sendFull(ctx, 200, "text/plain", "ok", Map.of(), keepAlive);
                } else {
                    sendFull(ctx, 200, "application/json", modelsJson(), Map.of(), keepAlive);
                }
                return;
            }
            if (req.method().equals(HttpMethod.POST)
                    && (path.equals("/v1/chat/completions") || path.equals("/v1/completions")
                    || path.endsWith("/v1/chat/completions") || path.endsWith("/v1/completions")
                    || path.endsWith("/v1/embeddings") || path.endsWith("/v1/rerank")
                    || path.endsWith("/v1/responses"))) {
                Reply reply = queued.poll();
                reply(ctx, reply != null ? reply : defaultReply, r, keepAlive);
                return;
            }
            sendFull(ctx, 404, "application/json", "{\"error\":{\"message\":\"not found\"}}", Map.of(), keepAlive);
        }

        private void reply(ChannelHandlerContext ctx, Reply reply, RecordedRequest r, boolean keepAlive) {
            if (reply instanceof Reply.Echo echo) {
                sendFull(ctx, echo.status(), "application/json", echoJson(r), Map.of(), keepAlive);
            } else if (reply instanceof Reply.Fixed f) {
                sendFull(ctx, f.status(), f.contentType(), f.body(), f.headers(), keepAlive);
            } else if (reply instanceof Reply.Delayed d) {
                ctx.executor().schedule(() -> reply(ctx, d.then(), r, keepAlive), d.delay().toMillis(),
                        TimeUnit.MILLISECONDS);
            } else if (reply instanceof Reply.Sse sse) {
                ctx.write(sseHead());
                for (String e : sse.events()) {
                    ctx.write(chunk("data: " + e + "\n\n"));
                }
                ctx.write(chunk("data: [DONE]\n\n"));
                ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
            } else if (reply instanceof Reply.ControlledStream) {
                ctx.writeAndFlush(sseHead());
                streams.add(new StreamHandle(ctx.channel(), r));
            } else if (reply instanceof Reply.BulkStream bulk) {
                ctx.writeAndFlush(sseHead());
                StreamHandle handle = new StreamHandle(ctx.channel(), r);
                BulkPump pump = new BulkPump(bulk, handle);
                ctx.pipeline().addLast(pump);
                streams.add(handle);
                pump.pump(ctx.channel());
            } else if (reply instanceof Reply.CloseConnection) {
                ctx.close();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /**
     * Writes a bulk stream only while the channel is writable; resumes on writability. Buffers:
     * each chunk is a fresh buffer released by the write.
     */
    private static final class BulkPump extends ChannelInboundHandlerAdapter {
        private final Reply.BulkStream bulk;
        private final StreamHandle handle;
        private long queuedBytes;
        private boolean done;

        BulkPump(Reply.BulkStream bulk, StreamHandle handle) {
            this.bulk = bulk;
            this.handle = handle;
        }

        void pump(Channel ch) {
            while (!done && ch.isActive() && ch.isWritable()) {
                long left = bulk.totalBytes() - queuedBytes;
                if (left <= 0) {
                    done = true;
                    ch.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                    return;
                }
                int n = (int) Math.min(left, bulk.chunkSize());
                byte[] payload = new byte[n];
                java.util.Arrays.fill(payload, (byte) 'x');
                if (n >= 8) {
                    // Shaped like SSE events so a reader could parse them.
                    payload[0] = 'd';
                    payload[1] = 'a';
                    payload[2] = 't';
                    payload[3] = 'a';
                    payload[4] = ':';
                    payload[5] = ' ';
                    payload[n - 2] = '\n';
                    payload[n - 1] = '\n';
                }
                queuedBytes += n;
                ch.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(payload)))
                        .addListener(f -> {
                            if (f.isSuccess()) {
                                handle.addSent(n);
                            }
                        });
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            pump(ctx.channel());
            ctx.fireChannelWritabilityChanged();
        }
    }

    private static HttpResponse sseHead() {
        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        return head;
    }

    private static DefaultHttpContent chunk(String s) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(s, StandardCharsets.UTF_8));
    }

    private static void sendFull(ChannelHandlerContext ctx, int status, String contentType, String body,
                                 Map<String, String> headers, boolean keepAlive) {
        ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
                HttpResponseStatus.valueOf(status), content);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, content.readableBytes());
        headers.forEach((k, v) -> res.headers().set(k, v));
        HttpUtil.setKeepAlive(res, keepAlive);
        var f = ctx.writeAndFlush(res);
        if (!keepAlive) {
            f.addListener(io.netty.channel.ChannelFutureListener.CLOSE);
        }
    }

    private String modelsJson() {
        StringBuilder sb = new StringBuilder("{\"object\":\"list\",\"data\":[");
        List<String> ids = models;
        for (int i = 0; i < ids.size(); i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append("{\"id\":").append(quote(ids.get(i)))
                    .append(",\"object\":\"model\",\"created\":0,\"owned_by\":").append(quote(name)).append('}');
        }
        return sb.append("]}").toString();
    }

    private String echoJson(RecordedRequest r) {
        StringBuilder sb = new StringBuilder("{\"id\":\"cmpl-test\",\"object\":\"chat.completion\",\"upstream\":")
                .append(quote(name)).append(",\"path\":").append(quote(r.uri())).append(",\"headers\":{");
        boolean first = true;
        for (Map.Entry<String, List<String>> e : r.headers().entrySet()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append(quote(e.getKey())).append(':').append(quote(String.join(",", e.getValue())));
        }
        sb.append("},\"body\":").append(quote(r.body()))
                .append(",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":")
                .append(quote("hello from " + name)).append("},\"finish_reason\":\"stop\"}]}");
        return sb.toString();
    }

    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }
}
