package dev.continuum.router.eventplane.zmtp;

import dev.continuum.router.eventplane.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Dials {@code tcp://host:port} publishers directly. The host is resolved once, on a small resolver pool
 * (never on an event loop: the JDK resolver blocks), the resolved addresses are checked against the
 * {@link CidrPolicy}, and only the first allowed address is dialed, as an {@link InetSocketAddress} that
 * is already resolved, so DNS cannot change the address between the policy check and the connect. The
 * whole of resolution plus connect runs under {@link #CONNECT_TIMEOUT}.
 *
 * <p>Channels are NIO channels: the event loops handed to {@link #connect} must be able to run them.
 */
public final class DirectTcpConnector implements ZmtpConnector {
    /** Resolution and TCP connect together (docs/decisions.md). */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** Resolutions in flight at once; more wait in the pool's queue. */
    static final int RESOLVER_THREADS = 4;

    /** Resolves a host name (or parses a literal) to its addresses; blocking. */
    @FunctionalInterface
    public interface HostResolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private final CidrPolicy policy;
    private final HostResolver resolver;
    private final Duration connectTimeout;
    private final @Nullable ByteBufAllocator allocator;
    private final ExecutorService resolverPool;

    private DirectTcpConnector(Builder b) {
        this.policy = b.policy;
        this.resolver = b.resolver;
        this.connectTimeout = b.connectTimeout;
        this.allocator = b.allocator;
        this.resolverPool = Executors.newFixedThreadPool(RESOLVER_THREADS, r -> {
            Thread t = new Thread(r, "zmtp-resolver");
            t.setDaemon(true);
            return t;
        });
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Transport transport() {
        return Transport.DIRECT;
    }

    @Override
    public CompletableFuture<Channel> connect(ZmtpTarget target, EventLoop loop, ChannelHandler handler) {
        long deadline = System.nanoTime() + connectTimeout.toNanos();
        CompletableFuture<InetAddress> resolved = CompletableFuture
                .supplyAsync(() -> allowedAddress(target.endpoint().host()), resolverPool)
                .orTimeout(connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
        CompletableFuture<Channel> result = new CompletableFuture<>();
        resolved.whenComplete((address, error) -> {
            if (error != null) {
                result.completeExceptionally(unwrap(error));
                return;
            }
            long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (remainingMillis <= 0) {
                result.completeExceptionally(new TimeoutException("connect budget spent resolving"));
                return;
            }
            if (result.isDone()) {
                return; // cancelled while resolving: dial nothing
            }
            dial(new InetSocketAddress(address, target.endpoint().port()), loop, handler,
                    (int) Math.min(Integer.MAX_VALUE, remainingMillis), result);
        });
        // Cancelling the result cancels a resolution still in flight.
        result.whenComplete((c, e) -> resolved.cancel(true));
        return result;
    }

    private InetAddress allowedAddress(String host) {
        InetAddress[] addresses;
        try {
            addresses = resolver.resolve(host);
        } catch (UnknownHostException e) {
            throw new CompletionException(new UnknownHostException("publisher host did not resolve"));
        }
        for (InetAddress address : addresses) {
            if (policy.allows(address)) {
                return address;
            }
        }
        throw new CompletionException(new RefusedAddressException(
                "no resolved address of the publisher is in dynamo.load.direct_allow_cidrs"));
    }

    private void dial(InetSocketAddress address, EventLoop loop, ChannelHandler handler, int timeoutMillis,
                      CompletableFuture<Channel> result) {
        Bootstrap b = new Bootstrap()
                .group(loop)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMillis)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                // A 2 KiB read buffer (docs/load-signals.md): allocated per read and released after it.
                .option(ChannelOption.RCVBUF_ALLOCATOR, new FixedRecvByteBufAllocator(ZmtpLimits.READ_BUFFER_BYTES))
                // We only write a handshake and PONGs; a peer that stops reading stops getting PONGs.
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(512, 1024))
                .handler(handler);
        if (allocator != null) {
            b.option(ChannelOption.ALLOCATOR, allocator);
        }
        ChannelFuture f = b.connect(address);
        f.addListener(done -> {
            if (!done.isSuccess()) {
                result.completeExceptionally(done.cause());
            } else if (!result.complete(f.channel())) {
                f.channel().close(); // cancelled while connecting
            }
        });
        result.whenComplete((c, e) -> {
            if (result.isCancelled()) {
                // Closing the channel fails a registration or connect still in flight. Cancelling f as well
                // made Netty's registration listener fail an already-cancelled promise and log an
                // IllegalStateException (seen when a storm of subscriptions was torn down mid-connect).
                f.channel().close();
            }
        });
    }

    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Override
    public void close() {
        resolverPool.shutdownNow();
    }

    public static final class Builder {
        private CidrPolicy policy = CidrPolicy.allowAny();
        private HostResolver resolver = InetAddress::getAllByName;
        private Duration connectTimeout = CONNECT_TIMEOUT;
        private @Nullable ByteBufAllocator allocator;

        private Builder() {
        }

        public Builder policy(CidrPolicy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /** The resolver (tests count and script resolutions); the JDK's by default. */
        public Builder resolver(HostResolver resolver) {
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        public Builder connectTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("connectTimeout: " + timeout + " (expected: > 0)");
            }
            this.connectTimeout = timeout;
            return this;
        }

        /** The buffer allocator of dialed channels (benchmarks and the buffer-cost test measure with their own). */
        public Builder allocator(ByteBufAllocator allocator) {
            this.allocator = Objects.requireNonNull(allocator, "allocator");
            return this;
        }

        public DirectTcpConnector build() {
            return new DirectTcpConnector(this);
        }
    }
}
