package dev.continuum.router.proxy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.FullHttpRequest;
import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;

/**
 * The ingress side of one proxied request, implemented by the HTTP server. Every method is
 * called on {@code channel().eventLoop()}.
 *
 * <p>Ownership: {@link ProxyService#handle} takes over {@link #request()} and releases it when
 * the exchange ends. The proxy writes the response (head, content, end) to {@link #channel()}
 * and then calls {@link #responseComplete} exactly once, unless {@link RelayControl#clientClosed()}
 * came first.
 */
public interface ClientExchange {
    Channel channel();

    FullHttpRequest request();

    ProxyRoute route();

    /** The decoded path, without the query. */
    String path();

    /** The raw query after {@code ?}, or null. */
    @Nullable String rawQuery();

    /** The TCP peer, or null for a unix-socket client. */
    @Nullable InetSocketAddress remoteAddress();

    /** The connection must close after this response (graceful shutdown, client asked, HTTP/1.0). */
    boolean closeAfterResponse();

    /**
     * The response's last write was issued ({@code lastWrite} completes when it is flushed);
     * {@code close} = the connection must be closed once it is.
     */
    void responseComplete(int status, boolean close, ChannelFuture lastWrite);
}
