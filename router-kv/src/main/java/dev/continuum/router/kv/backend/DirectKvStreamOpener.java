package dev.continuum.router.kv.backend;

import dev.continuum.router.eventbus.BackendTls;
import dev.continuum.router.eventbus.SseUpstream;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import java.net.URI;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * {@code transport: direct}: the router dials the backend's {@code url} itself, with the same bounded HTTP/1.1
 * request and answer checks the kv-listener uses ({@link SseUpstream}), over TLS for an {@code https} URL
 * ({@link BackendTls}). The stream counts as open once connected and, over TLS, once the handshake verified the
 * backend; a refused certificate fails the open with the handshake's exception.
 */
public final class DirectKvStreamOpener implements KvStreamOpener {
    private final EventLoopGroup group;
    private final URI url;
    private final @Nullable SslContext tls;

    public DirectKvStreamOpener(EventLoopGroup group, KvCacheIndexConfig.Source source) {
        this.group = group;
        this.url = Objects.requireNonNull(source.url());
        this.tls = BackendTls.isHttps(url)
                ? BackendTls.context(source.tls() == null ? null : source.tls().caCert()) : null;
    }

    @Override
    public CompletableFuture<Opened> open(String backend, @Nullable Long lastEventId, ChannelHandler consumer) {
        int port = BackendTls.port(url);
        CompletableFuture<Opened> result = new CompletableFuture<>();
        new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) SseUpstream.CONNECT_TIMEOUT.toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast(BackendTls.handler(tls, ch, url));
                        }
                        ch.pipeline().addLast(new HttpClientCodec(SseUpstream.MAX_INITIAL_LINE,
                                SseUpstream.MAX_HEADER_BYTES, SseUpstream.MAX_CHUNK_BYTES));
                        ch.pipeline().addLast(new SseUpstream(url, port, lastEventId));
                        ch.pipeline().addLast(consumer);
                    }
                })
                .connect(url.getHost(), port)
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        result.completeExceptionally(f.cause());
                        return;
                    }
                    Channel ch = f.channel();
                    SslHandler ssl = ch.pipeline().get(SslHandler.class);
                    if (ssl == null) {
                        result.complete(new Opened(ch, ch::close, () -> false, null));
                        return;
                    }
                    ssl.handshakeFuture().addListener(h -> {
                        if (h.isSuccess()) {
                            result.complete(new Opened(ch, ch::close, () -> false, null));
                        } else {
                            ch.close();
                            result.completeExceptionally(h.cause());
                        }
                    });
                });
        return result;
    }
}
