package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.load.LoadTargets;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpTarget;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A real load supervisor with one kv_metrics subscription whose "socket" is an {@link EmbeddedChannel}:
 * the supervisor's own subscription runs the router's ZMTP client, the frame and ActiveLoad decoders, the
 * order checks and the store (the production path from socket bytes to {@link LoadStore}), through the
 * public connector hook, without TCP. After the handshake (done on the supervisor's event loop), the
 * calling thread plays the event loop: it hands each message's bytes to the channel's pipeline, and
 * nothing else touches the subscription meanwhile.
 */
final class KvMetricsFeed implements AutoCloseable {
    static final long PUBLISHER = 0x3f00_0000_0000_0007L;

    private final LoadSupervisor supervisor;
    private final EmbeddedChannel channel;
    private long sequence;

    KvMetricsFeed(Set<WorkerId> live, LongSupplier ticker) throws Exception {
        CompletableFuture<EmbeddedChannel> opened = new CompletableFuture<>();
        ZmtpConnector connector = new ZmtpConnector() {
            @Override
            public Transport transport() {
                return Transport.DIRECT;
            }

            @Override
            public CompletableFuture<Channel> connect(ZmtpTarget target, EventLoop loop, ChannelHandler handler) {
                EmbeddedChannel ch = new EmbeddedChannel(handler);
                ch.writeInbound(Unpooled.wrappedBuffer(KvMetricsWire.pubHandshake()));
                opened.complete(ch);
                return CompletableFuture.completedFuture(ch);
            }

            @Override
            public void close() {
            }
        };
        supervisor = LoadSupervisor.builder(new SimpleMeterRegistry()).ticker(ticker)
                .directConnector(policy -> connector).build();
        supervisor.start().join();
        DynamoPublisher publisher = new DynamoPublisher(new PublisherId(Fleets.NS, PUBLISHER),
                PublisherTopic.KV_METRICS, "decode", "generate", "tcp://127.0.0.1:41000");
        // The benchmarks' workers declare every rank they publish (the store admits declared ranks only).
        supervisor.update(new LoadTargets(1, List.of(publisher), live.stream()
                .collect(java.util.stream.Collectors.toMap(id -> id, id -> new DpRanks(0, 1 << 16)))));
        channel = opened.get(10, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (supervisor.subscriptions().isEmpty()
                || supervisor.subscriptions().get(0).state() != SubscriptionState.CONNECTED) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("subscription not connected: " + supervisor.subscriptions());
            }
            Thread.sleep(1);
        }
        Thread.sleep(50); // let the connect callback finish on the supervisor's loop before this thread takes over
    }

    LoadStore store() {
        return supervisor.store();
    }

    /** The next message's sequence (the subscription drops a publisher's samples on a gap, so never skip one). */
    long nextSequence() {
        return ++sequence;
    }

    /** Publishes one sample through the subscription (setup path: encodes on the fly). */
    void publish(long workerId, long dpRank, long decodeBlocks, long prefillTokens) {
        send(KvMetricsWire.message(PUBLISHER, nextSequence(), workerId, dpRank, decodeBlocks, prefillTokens));
    }

    /** Hands one message's bytes to the subscription, as one socket read would. */
    void send(KvMetricsWire wire) {
        channel.pipeline().fireChannelRead(Unpooled.wrappedBuffer(wire.bytes));
    }

    @Override
    public void close() throws Exception {
        supervisor.stop().get(15, TimeUnit.SECONDS);
    }
}
