package dev.continuum.router.sim;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
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
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An OpenAI-wire upstream: {@code GET /v1/models}, {@code GET /health}, and {@code POST
 * /v1/chat/completions} / {@code /v1/completions} answered buffered or, for {@code "stream": true},
 * as {@code chunks} SSE events plus {@code [DONE]}, each flushed on its own, {@code chunkDelayMs}
 * apart. Deterministic and allocation-light so that it is not the bottleneck of a proxy benchmark.
 */
public final class OpenAiUpstream implements AutoCloseable {
    private static final Pattern MODEL = Pattern.compile("\"model\"\\s*:\\s*\"([^\"]{1,256})\"");
    private static final Pattern STREAM = Pattern.compile("\"stream\"\\s*:\\s*true");

    private final EventLoopGroup group;
    private final Channel channel;

    private OpenAiUpstream(EventLoopGroup group, Channel channel) {
        this.group = group;
        this.channel = channel;
    }

    public static OpenAiUpstream start(String host, int port, List<String> models, int chunks, long chunkDelayMs)
            throws InterruptedException {
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(0,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        byte[] modelList = modelList(models);
        ChannelFuture bound = new ServerBootstrap()
                .group(group)
                .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20),
                                new Handler(modelList, chunks, chunkDelayMs));
                    }
                })
                .bind(host, port).await();
        if (!bound.isSuccess()) {
            // Without this the event loop's threads would keep a process that cannot listen alive.
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw new IllegalStateException("cannot listen on " + host + ":" + port + ": " + bound.cause().getMessage(),
                    bound.cause());
        }
        return new OpenAiUpstream(group, bound.channel());
    }

    public InetSocketAddress address() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private static byte[] modelList(List<String> models) {
        StringBuilder json = new StringBuilder("{\"object\":\"list\",\"data\":[");
        for (int i = 0; i < models.size(); i++) {
            json.append(i == 0 ? "" : ",").append("{\"id\":\"").append(models.get(i))
                    .append("\",\"object\":\"model\",\"created\":0,\"owned_by\":\"continuum-sim\"}");
        }
        return json.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Releases nothing itself: {@link SimpleChannelInboundHandler} releases each aggregated request. */
    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final byte[] modelList;
        private final int chunks;
        private final long chunkDelayMs;

        Handler(byte[] modelList, int chunks, long chunkDelayMs) {
            this.modelList = modelList;
            this.chunks = chunks;
            this.chunkDelayMs = chunkDelayMs;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String path = request.uri();
            int q = path.indexOf('?');
            path = q >= 0 ? path.substring(0, q) : path;
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (request.method().equals(HttpMethod.GET) && path.equals("/v1/models")) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, modelList);
            } else if (request.method().equals(HttpMethod.GET) && path.equals("/health")) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "{\"status\":\"ok\"}".getBytes(StandardCharsets.UTF_8));
            } else if (request.method().equals(HttpMethod.POST)
                    && (path.equals("/v1/chat/completions") || path.equals("/v1/completions"))) {
                String body = request.content().toString(StandardCharsets.UTF_8);
                Matcher m = MODEL.matcher(body);
                String model = m.find() ? m.group(1) : "unknown";
                boolean chat = path.equals("/v1/chat/completions");
                if (STREAM.matcher(body).find()) {
                    stream(ctx, keepAlive, model, chat);
                } else {
                    respond(ctx, keepAlive, HttpResponseStatus.OK, completion(model, chat));
                }
            } else {
                respond(ctx, keepAlive, HttpResponseStatus.NOT_FOUND,
                        "{\"error\":{\"message\":\"not found\",\"type\":\"invalid_request_error\",\"code\":null}}"
                                .getBytes(StandardCharsets.UTF_8));
            }
        }

        /** A client that resets mid-stream (load generators do at the end of a run) is normal here. */
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        private static byte[] completion(String model, boolean chat) {
            String choice = chat
                    ? "{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello from continuum-sim.\"},"
                    + "\"finish_reason\":\"stop\"}"
                    : "{\"index\":0,\"text\":\"Hello from continuum-sim.\",\"finish_reason\":\"stop\"}";
            return ("{\"id\":\"cmpl-sim\",\"object\":\"" + (chat ? "chat.completion" : "text_completion")
                    + "\",\"created\":0,\"model\":\"" + model + "\",\"choices\":[" + choice
                    + "],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":6,\"total_tokens\":14}}")
                    .getBytes(StandardCharsets.UTF_8);
        }

        private void stream(ChannelHandlerContext ctx, boolean keepAlive, String model, boolean chat) {
            HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
            head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
                    .set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
            HttpUtil.setTransferEncodingChunked(head, true);
            HttpUtil.setKeepAlive(head, keepAlive);
            ctx.writeAndFlush(head);
            byte[] event = ("data: {\"id\":\"cmpl-sim\",\"object\":\""
                    + (chat ? "chat.completion.chunk" : "text_completion") + "\",\"created\":0,\"model\":\"" + model
                    + "\",\"choices\":[{\"index\":0," + (chat ? "\"delta\":{\"content\":\"tok \"}" : "\"text\":\"tok \"")
                    + ",\"finish_reason\":null}]}\n\n").getBytes(StandardCharsets.UTF_8);
            sendChunk(ctx, keepAlive, event, 0);
        }

        private void sendChunk(ChannelHandlerContext ctx, boolean keepAlive, byte[] event, int sent) {
            if (!ctx.channel().isActive()) {
                return;
            }
            if (sent == chunks) {
                ctx.write(new DefaultHttpContent(Unpooled.wrappedBuffer(
                        "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8))));
                var done = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
                if (!keepAlive) {
                    done.addListener(ChannelFutureListener.CLOSE);
                }
                return;
            }
            ctx.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event)));
            if (chunkDelayMs > 0) {
                ctx.executor().schedule(() -> sendChunk(ctx, keepAlive, event, sent + 1), chunkDelayMs,
                        TimeUnit.MILLISECONDS);
            } else {
                sendChunk(ctx, keepAlive, event, sent + 1);
            }
        }

        private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
                                    byte[] body) {
            ByteBuf content = Unpooled.wrappedBuffer(body);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            HttpUtil.setKeepAlive(response, keepAlive);
            var written = ctx.writeAndFlush(response);
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }
    }
}
