package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BackendTls;
import dev.continuum.router.eventbus.BusProtocol;
import dev.continuum.router.core.logging.LogSafe;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One relayed publisher on the agent: a TCP connection to the publisher and the data stream to the router,
 * bytes copied both ways. Backpressure follows Netty's proxy pattern: the publisher socket reads only while
 * the stream can take more (the router's HTTP/2 window), and the stream reads only while the socket can. Both
 * sides run on the bus connection's event loop.
 */
public final class RelayStream {
    private static final Logger LOG = LoggerFactory.getLogger(RelayStream.class);
    /** The {@code stream_closed} code when the upstream's certificate or handshake was refused. */

    private final BrokerAgent agent;
    private final Channel connection;
    private final String streamId;
    private final String sessionId;
    private @Nullable Channel upstream;
    private @Nullable Http2StreamChannel stream;
    private boolean closed;

    public RelayStream(BrokerAgent agent, Channel connection, String streamId, String sessionId) {
        this.agent = agent;
        this.connection = connection;
        this.streamId = streamId;
        this.sessionId = sessionId;
    }

    /** Dials the upstream within {@code budget}, then opens the data stream. */
    public void start(AgentRole.Upstream target, Duration budget) {
        new Bootstrap().group(connection.eventLoop()).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, budget.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.AUTO_READ, false)
                .handler(new io.netty.channel.ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        for (io.netty.channel.ChannelHandler h : target.handlers().apply(ch)) {
                            ch.pipeline().addLast(h);
                        }
                        ch.pipeline().addLast(new UpstreamHandler());
                    }
                })
                .connect(target.host(), target.port())
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        end("target_unreachable", "the publisher did not accept a connection");
                        return;
                    }
                    upstream = f.channel();
                    if (closed) {
                        f.channel().close();
                        return;
                    }
                    SslHandler tls = f.channel().pipeline().get(SslHandler.class);
                    if (tls == null) {
                        openStream();
                        return;
                    }
                    // Relay only a verified upstream: a refused certificate closes the command, not an open stream.
                    tls.handshakeFuture().addListener(h -> {
                        if (h.isSuccess()) {
                            if (!closed) {
                                openStream();
                            }
                            return;
                        }
                        String reason = BackendTls.reason(h.cause());
                        LOG.warn("relay {}: TLS to {}:{} refused ({}): {}", streamId, LogSafe.escape(target.host()),
                                target.port(), reason, LogSafe.escape(String.valueOf(h.cause().getMessage())));
                        end(BusProtocol.TARGET_TLS_FAILED, "TLS to the upstream failed: " + reason);
                    });
                });
    }

    private void openStream() {
        new Http2StreamChannelBootstrap(connection).handler(new StreamHandler()).open().addListener(f -> {
            if (!f.isSuccess()) {
                end("upstream_closed", "the bus connection closed");
                return;
            }
            Http2StreamChannel s = (Http2StreamChannel) f.getNow();
            stream = s;
            if (closed) {
                s.close();
                return;
            }
            s.writeAndFlush(new DefaultHttp2HeadersFrame(agent.request(BusProtocol.STREAMS_PREFIX + streamId)
                    .set(BusProtocol.SESSION_HEADER, sessionId).set("content-type", "application/octet-stream"),
                    false));
        });
    }

    /** Ends both sides; the router is told only when the end was ours ({@code code}). */
    private void end(String code, String message) {
        if (closed) {
            return;
        }
        close();
        agent.relayEnded(streamId, code, message);
    }

    /** Closes both sides without a word to the router (it unsubscribed, or the session ended). */
    public void close() {
        closed = true;
        Channel up = upstream;
        if (up != null) {
            up.close();
        }
        Http2StreamChannel s = stream;
        if (s != null && s.isActive()) {
            // END_STREAM first, so a router that still reads sees a clean end rather than a reset.
            s.writeAndFlush(new DefaultHttp2DataFrame(true)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** Publisher → router. */
    private final class UpstreamHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Http2StreamChannel s = stream;
            if (s == null || !(msg instanceof ByteBuf bytes)) {
                ReferenceCountUtil.release(msg);
                return;
            }
            s.writeAndFlush(new DefaultHttp2DataFrame(bytes));
            if (!s.isWritable()) {
                ctx.channel().config().setAutoRead(false);
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            Http2StreamChannel s = stream;
            if (s != null) {
                s.config().setAutoRead(ctx.channel().isWritable());
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            end("upstream_closed", "the publisher closed the connection");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }

    /** Router → publisher, and the router's answer to the stream request. */
    private final class StreamHandler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                Channel up = upstream;
                if (msg instanceof Http2HeadersFrame headers) {
                    CharSequence status = headers.headers().status();
                    if (status != null && "200".contentEquals(status) && up != null) {
                        up.config().setAutoRead(true);
                    } else if (status != null) {
                        end("stream_refused", "the router refused the data stream");
                    } else if (headers.isEndStream()) {
                        close();
                    }
                } else if (msg instanceof Http2DataFrame data) {
                    if (up != null && data.content().isReadable()) {
                        up.writeAndFlush(data.content().retain());
                        if (!up.isWritable()) {
                            ctx.channel().config().setAutoRead(false);
                        }
                    }
                    if (data.isEndStream()) {
                        close();
                    }
                } else if (msg instanceof Http2ResetFrame) {
                    close();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            Channel up = upstream;
            if (up != null) {
                up.config().setAutoRead(ctx.channel().isWritable());
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            // The router ended or reset the stream; telling it again is harmless (a consumed ID is ignored).
            end("stream_closed", "the data stream closed");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
