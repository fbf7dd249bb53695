package dev.continuum.router.eventbus;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import java.net.URI;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * {@code transport: direct}: the router dials the backend's {@code url} itself, with the same bounded HTTP/1.1
 * request and answer checks the kv-listener uses ({@link SseUpstream}).
 */
final class DirectKvStreamOpener implements KvStreamOpener {
    private final EventLoopGroup group;
    private final URI url;

    DirectKvStreamOpener(EventLoopGroup group, URI url) {
        this.group = group;
        this.url = url;
    }

    @Override
    public CompletableFuture<Opened> open(String backend, @Nullable Long lastEventId, ChannelHandler consumer) {
        int port = url.getPort() == -1 ? 80 : url.getPort();
        CompletableFuture<Opened> result = new CompletableFuture<>();
        new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) AgentSettings.CONNECT_BUDGET.toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(KvListenerRole.MAX_INITIAL_LINE,
                                KvListenerRole.MAX_HEADER_BYTES, KvListenerRole.MAX_CHUNK_BYTES));
                        ch.pipeline().addLast(new SseUpstream(url, port, lastEventId));
                        ch.pipeline().addLast(consumer);
                    }
                })
                .connect(url.getHost(), port)
                .addListener((ChannelFutureListener) f -> {
                    if (f.isSuccess()) {
                        Channel ch = f.channel();
                        result.complete(new Opened(ch, ch::close, () -> false));
                    } else {
                        result.completeExceptionally(f.cause());
                    }
                });
        return result;
    }
}
