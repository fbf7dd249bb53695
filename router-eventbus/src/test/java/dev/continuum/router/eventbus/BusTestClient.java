package dev.continuum.router.eventbus;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.ReferenceCountUtil;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A real HTTP/2-over-TLS client (Netty's) that sends exactly what a test asks for: any headers, any body
 * bytes, any line. One connection per instance; streams are opened on it as {@link Exchange}s.
 */
public final class BusTestClient implements AutoCloseable {
    public static final EventLoopGroup LOOPS = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

    private final Channel channel;
    public final CompletableFuture<Void> handshake = new CompletableFuture<>();

    private BusTestClient(Channel channel) {
        this.channel = channel;
    }

    /** TLS options of one client. */
    public record Tls(Path trustedCa, @Nullable Path cert, @Nullable Path key, String protocol, String alpn) {
        public static Tls of(Path trustedCa) {
            return new Tls(trustedCa, null, null, "TLSv1.3", ApplicationProtocolNames.HTTP_2);
        }

        public Tls withCertificate(Path certFile, Path keyFile) {
            return new Tls(trustedCa, certFile, keyFile, protocol, alpn);
        }

        public Tls withProtocol(String p) {
            return new Tls(trustedCa, cert, key, p, alpn);
        }

        public Tls withAlpn(String a) {
            return new Tls(trustedCa, cert, key, protocol, a);
        }
    }

    public static BusTestClient connect(InetSocketAddress address, Tls tls) throws Exception {
        SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
                .trustManager(tls.trustedCa().toFile()).protocols(tls.protocol())
                .applicationProtocolConfig(new ApplicationProtocolConfig(ApplicationProtocolConfig.Protocol.ALPN,
                        ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                        ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT, tls.alpn()));
        if (tls.cert() != null && tls.key() != null) {
            builder.keyManager(tls.cert().toFile(), tls.key().toFile());
        }
        SslContext ssl = builder.build();
        CompletableFuture<Void> handshake = new CompletableFuture<>();
        Channel ch = new Bootstrap().group(LOOPS).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel c) {
                        c.pipeline().addLast(ssl.newHandler(c.alloc(), "localhost", address.getPort()));
                        c.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                if (evt instanceof SslHandshakeCompletionEvent done) {
                                    if (done.isSuccess()) {
                                        ctx.pipeline().addLast(Http2FrameCodecBuilder.forClient().build());
                                        ctx.pipeline().addLast(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
                                        ctx.pipeline().remove(this);
                                        handshake.complete(null);
                                    } else {
                                        handshake.completeExceptionally(done.cause());
                                    }
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                handshake.completeExceptionally(new IllegalStateException("closed"));
                            }
                        });
                    }
                }).connect(address).sync().channel();
        BusTestClient client = new BusTestClient(ch);
        handshake.whenComplete((v, e) -> {
            if (e == null) {
                client.handshake.complete(null);
            } else {
                client.handshake.completeExceptionally(e);
            }
        });
        return client;
    }

    public Channel channel() {
        return channel;
    }

    /** Opens a stream with {@code headers} (pseudo-headers included) and, optionally, an end of stream. */
    public Exchange open(Http2Headers headers, boolean endStream) throws Exception {
        handshake.get(5, TimeUnit.SECONDS);
        Exchange exchange = new Exchange();
        Http2StreamChannel stream = new Http2StreamChannelBootstrap(channel).handler(exchange).open().sync().getNow();
        exchange.stream = stream;
        stream.writeAndFlush(new DefaultHttp2HeadersFrame(headers, endStream)).sync();
        return exchange;
    }

    public static Http2Headers post(String path) {
        return new DefaultHttp2Headers().method("POST").scheme("https").authority("localhost").path(path);
    }

    public static Http2Headers session(@Nullable String token) {
        Http2Headers headers = post("/bus/v1/session").set("continuum-bus-version", "1")
                .set("content-type", "application/x-ndjson");
        if (token != null) {
            headers.set("authorization", "Bearer " + token);
        }
        return headers;
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
    }

    /** One stream: what the router answered, frame by frame. Releases every frame it receives. */
    public static final class Exchange extends ChannelInboundHandlerAdapter {
        @Nullable Http2StreamChannel stream;
        final CompletableFuture<Http2Headers> headers = new CompletableFuture<>();
        final CompletableFuture<Http2Headers> trailers = new CompletableFuture<>();
        final CompletableFuture<Void> closed = new CompletableFuture<>();
        public final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final ByteArrayOutputStream body = new ByteArrayOutputStream();
        private final List<Object> events = new ArrayList<>();
        volatile boolean reset;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (msg instanceof Http2HeadersFrame h) {
                    if (!headers.isDone()) {
                        headers.complete(h.headers());
                    } else {
                        trailers.complete(h.headers());
                    }
                } else if (msg instanceof Http2DataFrame d) {
                    synchronized (body) {
                        byte[] bytes = new byte[d.content().readableBytes()];
                        d.content().readBytes(bytes);
                        body.writeBytes(bytes);
                        splitLines();
                    }
                } else if (msg instanceof Http2ResetFrame) {
                    reset = true;
                }
                events.add(msg.getClass().getSimpleName());
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void splitLines() {
            byte[] all = body.toByteArray();
            int start = 0;
            for (int i = 0; i < all.length; i++) {
                if (all[i] == '\n') {
                    lines.add(new String(all, start, i - start, StandardCharsets.UTF_8));
                    start = i + 1;
                }
            }
            body.reset();
            body.write(all, start, all.length - start);
        }

        /** The body so far that is not a complete line (a refusal's JSON has no newline). */
        public String rest() {
            synchronized (body) {
                return body.toString(StandardCharsets.UTF_8);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed.complete(null);
        }

        public void send(String text, boolean endStream) {
            ByteBuf bytes = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
            Http2StreamChannel s = stream;
            if (s == null) {
                bytes.release();
                throw new IllegalStateException("not open");
            }
            s.writeAndFlush(new DefaultHttp2DataFrame(bytes, endStream));
        }

        public void sendLine(String json) {
            send(json + "\n", false);
        }

        public String status() throws Exception {
            return headers.get(5, TimeUnit.SECONDS).status().toString();
        }

        /** The JSON error code of a refusal, once its body ended. */
        public String errorCode() throws Exception {
            closedOrEnded();
            var node = ControlJson.MAPPER.readTree(rest());
            return node.path("error").path("code").asText();
        }

        private void closedOrEnded() throws Exception {
            closed.get(5, TimeUnit.SECONDS);
        }

        public String nextLine() throws Exception {
            String line = lines.poll(5, TimeUnit.SECONDS);
            if (line == null) {
                throw new AssertionError("no line within 5 s; events " + events);
            }
            return line;
        }
    }
}
