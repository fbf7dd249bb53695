package dev.continuum.router.eventbus;

import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.util.AttributeKey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code dynamo.load.transport: broker} connector: the subscription's ZMTP client runs unchanged over an
 * event-bus data stream instead of a TCP connection (docs/event-bus.md, "Subscribing through a broker").
 *
 * <ul>
 *   <li><b>Pending.</b> {@link #reachable} completes only once a broker session covers the target's namespace;
 *       the subscription waits for that session change, without polling. Waiters woken together spread their
 *       opens over up to {@link #WAKE_JITTER} so a reconnecting broker is not hit by every stream at once.</li>
 *   <li><b>Opening.</b> {@link EventBus#openStream} places the stream by rendezvous and fails after
 *       {@link EventBus#OPEN_TIMEOUT}; failures carry only a reason and the broker's code, never an address.</li>
 *   <li><b>Carrier loss.</b> A stream that closed because its session ended, drains or lost its connection is
 *       a lost carrier ({@link #carrierLost}): the subscription retries at the reconnect floor and the next
 *       open lands on the next-ranked broker.</li>
 * </ul>
 *
 * <p>The returned channel is the HTTP/2 child channel: it runs on the bus connection's event loop, not the one
 * passed to {@link #connect}. Closing it ends the stream (END_STREAM, then a reset if the broker has not ended
 * its half within {@link StreamBytesHandler#CLOSE_TIMEOUT}) and sends {@code unsubscribe}.
 */
public final class BrokerConnector implements ZmtpConnector {
    /** The largest random delay between a covering session's arrival and a waiting subscription's open. */
    public static final Duration WAKE_JITTER = Duration.ofMillis(500);
    private static final AttributeKey<BusStream> STREAM = AttributeKey.valueOf(BrokerConnector.class, "stream");

    private static final Logger LOG = LoggerFactory.getLogger(BrokerConnector.class);

    private final EventBus bus;
    private final AtomicBoolean notListeningLogged = new AtomicBoolean();
    private final RandomGenerator random;
    private final Duration wakeJitter;

    public BrokerConnector(EventBus bus) {
        this(bus, RandomGenerator.getDefault(), WAKE_JITTER);
    }

    /** With the jitter's source and bound (tests pass zero to open at once). */
    public BrokerConnector(EventBus bus, RandomGenerator random, Duration wakeJitter) {
        this.bus = bus;
        this.random = random;
        this.wakeJitter = wakeJitter;
    }

    @Override
    public Transport transport() {
        return Transport.BROKER;
    }

    @Override
    public CompletableFuture<Void> reachable(ZmtpTarget target) {
        CompletableFuture<Void> covered = bus.awaitCoverage(target.namespace());
        if (covered.isDone()) {
            return covered;
        }
        if (!bus.listening() && !notListeningLogged.getAndSet(true)) {
            LOG.warn("dynamo.load.transport is broker but the event bus listener is not running (dynamo.event_bus "
                    + "is off or failed to start): subscriptions stay pending until a broker session covers them");
        }
        CompletableFuture<Void> woken = new CompletableFuture<>();
        covered.whenComplete((v, error) -> {
            long delay = wakeJitter.isZero() ? 0 : random.nextLong(wakeJitter.toNanos() + 1);
            // The JDK's delay thread only completes the future; the subscription's loop does the work.
            CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS).execute(() -> woken.complete(null));
        });
        woken.whenComplete((v, error) -> covered.cancel(false)); // a cancelled waiter stops listening
        return woken;
    }

    @Override
    public CompletableFuture<Channel> connect(ZmtpTarget target, EventLoop loop, ChannelHandler handler) {
        SubscribeTarget.ZmqTcp zmq = new SubscribeTarget.ZmqTcp(target.namespace(), target.endpoint().host(),
                target.endpoint().port());
        CompletableFuture<BusStream> opening = bus.openStream(zmq, target.topic());
        CompletableFuture<Channel> result = new CompletableFuture<>();
        // Runs inline on the stream's event loop as the stream is handed over, before any of its frames is read.
        opening.whenComplete((stream, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
                return;
            }
            Channel ch = stream.channel();
            ch.attr(STREAM).set(stream);
            ch.closeFuture().addListener(f -> stream.close());
            ch.pipeline().addLast("bus-bytes", new StreamBytesHandler(StreamBytesHandler.CLOSE_TIMEOUT));
            ch.pipeline().addLast("zmtp", handler);
            ch.pipeline().fireChannelActive(); // the stream was active before the ZMTP handler joined
            if (!result.complete(ch)) {
                ch.close();
            }
        });
        result.whenComplete((ch, error) -> {
            if (result.isCancelled()) {
                opening.cancel(false);
            }
        });
        return result;
    }

    @Override
    public boolean carrierLost(Channel channel) {
        BusStream stream = channel.attr(STREAM).get();
        return stream != null && stream.carrierLost();
    }

    @Override
    public @org.jspecify.annotations.Nullable String carrierOf(Channel channel) {
        BusStream stream = channel.attr(STREAM).get();
        return stream == null ? null : stream.brokerId();
    }

    @Override
    public void close() {
        // Owns nothing: the bus belongs to its supervisor.
    }
}
