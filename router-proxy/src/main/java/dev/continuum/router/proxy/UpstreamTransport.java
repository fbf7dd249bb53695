package dev.continuum.router.proxy;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.resolver.AddressResolverGroup;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.DnsNameResolverBuilder;
import io.netty.util.NetUtil;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import javax.net.ssl.SSLException;
import org.jspecify.annotations.Nullable;

/**
 * How the proxy opens upstream connections: on the event loop it is given (the inbound
 * connection's, so a request and its upstream never cross threads), with Netty's non-blocking DNS
 * resolver (the JDK resolver would block the event loop), and TLS through the JDK provider with
 * the default trust store and host-name verification.
 */
final class UpstreamTransport implements AutoCloseable {
    /** Upstream writes are request bodies: small marks keep a slow upstream from piling up memory. */
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(32 * 1024, 64 * 1024);

    final EventLoopGroup group;
    final UpstreamLimits limits;
    private final Class<? extends SocketChannel> channelType;
    private final AddressResolverGroup<InetSocketAddress> resolver;
    private final SslContext ssl;

    UpstreamTransport(EventLoopGroup group, boolean epoll, UpstreamLimits limits, @Nullable SslContext tls) {
        this.group = group;
        this.limits = limits;
        this.channelType = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        Class<? extends DatagramChannel> datagram = epoll ? EpollDatagramChannel.class : NioDatagramChannel.class;
        this.resolver = new DnsAddressResolverGroup(new DnsNameResolverBuilder()
                .datagramChannelType(datagram)
                .socketChannelType(channelType));
        this.ssl = tls != null ? tls : ClientTls.CONTEXT;
    }

    /** Built once per process: loading the default trust store is slow, and the context is immutable. */
    private static final class ClientTls {
        static final SslContext CONTEXT = build();

        private static SslContext build() {
            try {
                return SslContextBuilder.forClient()
                        .sslProvider(SslProvider.JDK)
                        .endpointIdentificationAlgorithm("HTTPS")
                        .build();
            } catch (SSLException e) {
                throw new IllegalStateException("cannot build the upstream TLS context", e);
            }
        }
    }

    SslContext ssl() {
        return ssl;
    }

    /** {@code connectTimeout}: Netty's connect bound; zero leaves the bound to the caller. */
    ChannelFuture connect(EventLoop loop, String host, int port, Duration connectTimeout, ChannelHandler initializer) {
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(channelType)
                .resolver(resolver)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                .handler(initializer);
        InetAddress literal = NetUtil.createInetAddressFromIpAddressString(host);
        InetSocketAddress target = literal != null
                ? new InetSocketAddress(literal, port)
                : InetSocketAddress.createUnresolved(host, port);
        return b.connect(target);
    }

    @Override
    public void close() {
        resolver.close();
    }
}
