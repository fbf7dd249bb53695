package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.EventBusConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.jspecify.annotations.Nullable;

/**
 * Waits for the TLS handshake, insists on ALPN {@code h2}, records the verified client certificate with the CA
 * generation that verified it, then installs HTTP/2 with the listener's windows (docs/event-bus-protocol.md,
 * section 1) and starts the keepalive PINGs. Forwards everything; holds no buffer.
 */
final class TlsHandshakeHandler extends ChannelInboundHandlerAdapter {
    /** The HTTP/2 default connection window every peer starts from (RFC 9113, section 6.9.2). */
    private static final int DEFAULT_WINDOW = 65_535;

    private final ListenerContext context;
    private final ListenerState state;
    private @Nullable ScheduledFuture<?> pings;

    TlsHandshakeHandler(ListenerContext context, ListenerState state) {
        this.context = context;
        this.state = state;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (!(evt instanceof SslHandshakeCompletionEvent done)) {
            super.userEventTriggered(ctx, evt);
            return;
        }
        BusConnection connection = BusConnection.of(ctx.channel());
        SslHandler ssl = ctx.pipeline().get(SslHandler.class);
        if (!done.isSuccess() || ssl == null || !ApplicationProtocolNames.HTTP_2.equals(ssl.applicationProtocol())) {
            connection.closeWith(BusErrorCode.HANDSHAKE_FAILED);
            return;
        }
        connection.tlsDone(peer(ssl));
        installHttp2(ctx);
    }

    private @Nullable CertIdentity peer(SslHandler ssl) {
        try {
            Certificate[] chain = ssl.engine().getSession().getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate leaf
                    ? CertIdentity.of(leaf, state.tls().caGeneration()) : null;
        } catch (SSLPeerUnverifiedException e) {
            return null; // no certificate: the requests must carry a token
        }
    }

    private void installHttp2(ChannelHandlerContext ctx) {
        EventBusConfig config = state.config();
        Http2FrameCodec codec = Http2FrameCodecBuilder.forServer()
                .initialSettings(Http2Settings.defaultSettings()
                        .initialWindowSize(config.streamBufferBytes())
                        .maxConcurrentStreams(config.maxStreamsPerSession() + 1L)
                        .maxHeaderListSize(BusProtocol.MAX_HEADER_LIST_BYTES))
                .build();
        ctx.pipeline().addLast("h2", codec);
        ctx.pipeline().addLast("h2-streams", new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
            @Override
            protected void initChannel(Http2StreamChannel stream) {
                stream.pipeline().addLast(new BusRequestHandler(context));
            }
        }));
        ctx.pipeline().remove(this);
        long grant = config.maxSessionBufferBytes() - DEFAULT_WINDOW;
        if (grant > 0) {
            ctx.channel().writeAndFlush(new DefaultHttp2WindowUpdateFrame((int) grant));
        }
        long every = context.timings.ping().toNanos();
        pings = ctx.channel().eventLoop().scheduleAtFixedRate(
                () -> ctx.channel().writeAndFlush(new DefaultHttp2PingFrame(System.nanoTime())),
                every, every, TimeUnit.NANOSECONDS);
        ScheduledFuture<?> scheduled = pings;
        ctx.channel().closeFuture().addListener(f -> scheduled.cancel(false));
    }
}
