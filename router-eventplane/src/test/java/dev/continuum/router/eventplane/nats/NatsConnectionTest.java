package dev.continuum.router.eventplane.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.Secret;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.eventplane.ChannelReceiver;
import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.testing.NatsServerExtension;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * The shared connection against real nats-servers: token and TLS client-certificate authentication, a server
 * crash and restart (reconnect, resubscribe, the receiver told of both), a settings change that moves the
 * subscription to another server, and the drops before decoding. Messages are published by the NATS client
 * with envelopes packed by msgpack-core, not by the router's code.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class NatsConnectionTest {
    @RegisterExtension
    static final NatsServerExtension TOKEN = NatsServerExtension.withToken("s3cret-token");
    @RegisterExtension
    static final NatsServerExtension TLS = NatsServerExtension.tls();
    @RegisterExtension
    static final NatsServerExtension OTHER = NatsServerExtension.plain();

    private static final long PUBLISHER = 77;
    private static final String PREFIX = "namespace.dynamo";
    private static final String SUBJECT = PREFIX + ".kv_metrics";
    private static final ChannelSubscription.Settings SETTINGS = new ChannelSubscription.Settings("kv_metrics",
            ZmtpLimits.KV_METRICS, new Backoff(Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofSeconds(5)),
            RandomGenerator.getDefault(), System::nanoTime);

    private final EventLoop loop = new DefaultEventLoop();
    private final NatsConnection nats = NatsConnection.standalone();

    @AfterEach
    void tearDown() throws Exception {
        nats.stop().join();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** Counts what the family would see, decoding with the family's envelope decoder. */
    static final class Recorder implements ChannelReceiver {
        final List<Long> sequences = new CopyOnWriteArrayList<>();
        final AtomicInteger connects = new AtomicInteger();
        final AtomicInteger disconnects = new AtomicInteger();
        final EventFrameDecoder decoder = EventFrameDecoder.kvMetrics();

        @Override
        public void onConnected() {
            connects.incrementAndGet();
        }

        @Override
        public void onDisconnected() {
            disconnects.incrementAndGet();
        }

        @Override
        public void onMessage(ZmtpMessage message) {
            if (decoder.decode(message) instanceof Decoded.Ok<EventEnvelope> ok) {
                sequences.add(ok.value().sequence());
            }
        }

        @Override
        public void onTransportRefused() {
        }

        @Override
        public void onStopped(boolean departed) {
        }
    }

    static byte[] envelope(long publisher, long sequence) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            byte[] load;
            try (MessageBufferPacker l = MessagePack.newDefaultBufferPacker()) {
                l.packMapHeader(2).packString("worker_id").packLong(5).packString("dp_rank").packInt(0);
                load = l.toByteArray();
            }
            p.packMapHeader(5).packString("publisher_id").packLong(publisher).packString("sequence").packLong(sequence)
                    .packString("published_at").packLong(1_790_000_000_000L).packString("topic").packString("kv_metrics")
                    .packString("payload").packBinaryHeader(load.length).writePayload(load);
            return p.toByteArray();
        }
    }

    private static NatsConfig config(String url, NatsTlsConfig tls, NatsAuthConfig auth) {
        return new NatsConfig(List.of(url), tls, auth, Duration.ofSeconds(2), Duration.ofMillis(50));
    }

    private NatsChannelSubscription subscribe(Recorder recorder) {
        DynamoPublisher p = new DynamoPublisher(new PublisherId("dynamo", PUBLISHER), PublisherTopic.KV_METRICS, null,
                null, DynamoPublisher.NATS_ADDRESS_PREFIX + PREFIX);
        NatsChannelSubscription s = new NatsChannelSubscription(p, nats, loop.next(), SETTINGS, recorder);
        s.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> s.state() == SubscriptionState.CONNECTED);
        return s;
    }

    /**
     * Publishes {@code sequence} again on every poll until the recorder has seen it: core NATS does not keep a
     * message for a subscription that is still moving or reconnecting.
     */
    private static void publishUntilSeen(Options.Builder options, Recorder recorder, long sequence) throws Exception {
        try (Connection c = Nats.connect(options.build())) {
            byte[] message = envelope(PUBLISHER, sequence);
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
                c.publish(SUBJECT, message);
                c.flush(Duration.ofSeconds(5));
                return recorder.sequences.contains(sequence);
            });
        }
    }

    @Test
    void aTokenServerIsReachedWithTheTokenAndACrashIsReconnectedAndResubscribed() throws Exception {
        nats.apply(config(TOKEN.url(), null, new NatsAuthConfig(Secret.of("s3cret-token"), null, null, null, null)));
        nats.start().join();
        Recorder recorder = new Recorder();
        subscribe(recorder);
        assertThat(nats.connectionState()).isEqualTo(NatsConnectionState.CONNECTED);
        Options.Builder publisher = new Options.Builder().server(TOKEN.url()).token("s3cret-token".toCharArray());
        publishUntilSeen(publisher, recorder, 0);
        assertThat(recorder.connects.get()).isEqualTo(1);

        TOKEN.kill();
        await().atMost(Duration.ofSeconds(20)).until(() -> nats.connectionState() == NatsConnectionState.CONNECTING
                && recorder.disconnects.get() == 1);
        TOKEN.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> nats.connectionState() == NatsConnectionState.CONNECTED
                && recorder.connects.get() == 2);
        assertThat(nats.reconnectCount()).isEqualTo(1);
        publishUntilSeen(publisher, recorder, 1);
    }

    @Test
    void aWrongTokenNeverConnects() {
        nats.apply(config(TOKEN.url(), null, new NatsAuthConfig(Secret.of("wrong"), null, null, null, null)));
        nats.start().join();
        Recorder recorder = new Recorder();
        DynamoPublisher p = new DynamoPublisher(new PublisherId("dynamo", PUBLISHER), PublisherTopic.KV_METRICS, null,
                null, DynamoPublisher.NATS_ADDRESS_PREFIX + PREFIX);
        NatsChannelSubscription s = new NatsChannelSubscription(p, nats, loop.next(), SETTINGS, recorder);
        s.start();
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                .until(() -> s.state() == SubscriptionState.PENDING && recorder.connects.get() == 0);
        assertThat(nats.connectionState()).isEqualTo(NatsConnectionState.CONNECTING);
    }

    @Test
    void tlsWithAClientCertificate() throws Exception {
        var certs = TLS.certificates();
        nats.apply(config(TLS.url(), new NatsTlsConfig(certs.caCert(), certs.clientCert(),
                Secret.of(certs.clientKey().toString())), null));
        nats.start().join();
        Recorder recorder = new Recorder();
        subscribe(recorder);
        Options.Builder publisher = new Options.Builder().server(TLS.url())
                .sslContext(NatsOptions.of(config(TLS.url(), new NatsTlsConfig(certs.caCert(), certs.clientCert(),
                        Secret.of(certs.clientKey().toString())), null), (c, e) -> { }, new io.nats.client.ErrorListener() {
                        }).getSslContext());
        publishUntilSeen(publisher, recorder, 0);
    }

    @Test
    void aSettingsChangeMovesTheSubscriptionToTheNewServerWithoutAStop() throws Exception {
        nats.apply(config(TOKEN.url(), null, new NatsAuthConfig(Secret.of("s3cret-token"), null, null, null, null)));
        nats.start().join();
        Recorder recorder = new Recorder();
        NatsChannelSubscription s = subscribe(recorder);
        publishUntilSeen(new Options.Builder().server(TOKEN.url()).token("s3cret-token".toCharArray()), recorder, 0);

        nats.apply(config(OTHER.url(), null, null));
        publishUntilSeen(new Options.Builder().server(OTHER.url()), recorder, 1);
        assertThat(s.state()).isEqualTo(SubscriptionState.CONNECTED);
        assertThat(recorder.disconnects.get()).isZero();
        assertThat(recorder.connects.get()).isEqualTo(1);
    }

    @Test
    void oversizedUnreadableAndOtherPublishersMessagesAreDroppedBeforeTheReceiver() throws Exception {
        nats.apply(config(OTHER.url(), null, null));
        nats.start().join();
        Recorder recorder = new Recorder();
        subscribe(recorder);
        try (Connection c = Nats.connect(new Options.Builder().server(OTHER.url()).build())) {
            c.publish(SUBJECT, new byte[ZmtpLimits.KV_METRICS.maxFrameBytes() + 1]);
            c.publish(SUBJECT, "{\"publisher_id\":77}".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            c.publish(SUBJECT, envelope(PUBLISHER + 1, 0));
            c.publish(SUBJECT, envelope(PUBLISHER, 5));
            c.flush(Duration.ofSeconds(5));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.sequences.contains(5L));
        assertThat(recorder.sequences).containsExactly(5L);
        assertThat(nats.droppedCount(NatsDrop.OVERSIZED)).isEqualTo(1);
        assertThat(nats.droppedCount(NatsDrop.MALFORMED)).isEqualTo(1);
    }
}
