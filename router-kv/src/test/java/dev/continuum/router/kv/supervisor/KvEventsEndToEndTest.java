package dev.continuum.router.kv.supervisor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.kv.events.KvWire;
import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.KvEventResult;
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.eventplane.Backoff;
import dev.continuum.router.load.LoadConfig;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import dev.continuum.router.eventplane.Transport;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.KvPickerSettings;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.PromptBlocks;
import dev.continuum.router.shim.Selection;
import dev.continuum.router.testing.LogCapture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * kv-events from a real ZMTP publisher (JeroMQ, upstream's framing) through the KV supervisor's subscription,
 * the index's ingest and writer, to the KV-aware picker's choice; discovery is the router's own registry,
 * written as a watcher writes it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvEventsEndToEndTest {
    private static final String NS = "dynamo";
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final long PUBLISHER = 0xABCD_0000_0000_0001L;
    /** The local (tokens) hashes of a 4-block prompt of 16-token blocks; the index keys on these. */
    private static final long[] TOKENS = {0x1111, 0x2222, 0x3333, 0x4444};
    private static final Instant T0 = Instant.parse("2026-09-23T04:11:02Z");

    private final ZContext zmq = new ZContext();
    private ZMQ.Socket pub = zmq.createSocket(SocketType.PUB);
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final KvIndexWriter writer = new KvIndexWriter(meters, IndexLimits.DEFAULT);
    /** The supervisor's monotonic clock (the 60 s cut-off's), moved by hand. */
    private final AtomicLong clock = new AtomicLong(1);
    /** Reconnects after 50 to 100 ms, so a publisher that comes back is seen at once. */
    private final KvSupervisor kv = KvSupervisor.builder(writer, meters).ticker(clock::get)
            .backoff(new Backoff(Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofSeconds(5))).build();
    private AutoCloseable following;
    private long eventId;

    @AfterEach
    void tearDown() throws Exception {
        if (following != null) {
            following.close();
        }
        kv.stop().join();
        writer.stop().join();
        zmq.close();
    }

    private static DynamoWorker aggregated(long id) {
        ModelCard card = new ModelCard(MODEL, null, false, 16, new ModelCard.WorkerCapacity(1000L, 1000L, 256L,
                32768L), null, null, null, ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(NS, id), WorkerRole.AGGREGATED, "backend", "generate", card, T0, T0);
    }

    private void send(ZmtpMessage m) {
        for (int i = 0; i < m.parts(); i++) {
            pub.send(Arrays.copyOfRange(m.array(), m.offset(i), m.offset(i) + m.length(i)),
                    i < m.parts() - 1 ? ZMQ.SNDMORE : 0);
        }
    }

    /** Worker 6 stores the prompt's four blocks (re-sent until the index has them: PUB drops before the join). */
    private void storeUntilIndexed() {
        OverlapScores out = new OverlapScores(16);
        // One message in flight at a time (500 ms apart), so none is still queued once the index has the blocks.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() -> {
            send(KvWire.message(PUBLISHER, eventId, KvWire.stored(6, eventId, 0, null,
                    new long[] {10, 11, 12, 13}, TOKENS)));
            eventId++;
            writer.index().findMatches(new BlockHashes(16, TOKENS), out);
            return out.matchedBlocksOf(6, 0) == 4;
        });
    }

    /** Leading blocks of the prompt worker 6 holds, as the picker would see them. */
    private int held() {
        OverlapScores out = new OverlapScores(16);
        writer.index().findMatches(new BlockHashes(16, TOKENS), out);
        return out.matchedBlocksOf(6, 0);
    }

    private double gauge(String state) {
        return meters.get(KvSupervisor.SUBSCRIPTIONS).tag("state", state).tag("transport", "direct").gauge().value();
    }

    @Test
    void eventsFromARealPublisherSteerThePickAndLeaveWithTheirSubscription() throws Exception {
        pub.setLinger(0);
        pub.bind("tcp://127.0.0.1:*");
        String address = pub.getLastEndpoint().replace("0.0.0.0", "127.0.0.1");
        DynamoPublisher channel = new DynamoPublisher(new PublisherId(NS, PUBLISHER), PublisherTopic.KV_EVENTS,
                "backend", null, address);
        List<DynamoWorker> workers = List.of(aggregated(5), aggregated(6));
        writer.start().join();
        kv.start().join();
        following = kv.follow(registry);
        MutableDynamoRegistry.Writer discovery = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of(NS),
                FleetView.of(workers, List.of(channel)));

        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                .anyMatch(s -> s.state() == SubscriptionState.CONNECTED));
        SubscriptionView view = kv.subscriptions().get(0);
        assertThat(view.family()).isEqualTo("kv-events");
        assertThat(view.publisherId()).isEqualTo(PUBLISHER);
        assertThat(kv.publishers()).isEqualTo(1);
        assertThat(gauge("connected")).isEqualTo(1);
        storeUntilIndexed();

        // The KV-aware picker over that index sends the prompt to the worker holding it.
        LoadSupervisor load = LoadSupervisor.builder(meters).build();
        DynamoWorkerPicker picker = LoadBasedPicking.create(load.store(), System::nanoTime, meters, registry)
                .kvAware(writer.index(), () -> KvPickerSettings.DEFAULTS, meters);
        PromptBlocks prompt = new PromptBlocks(64, List.of(new BlockHashes(16, TOKENS)));
        for (int i = 0; i < 4; i++) {
            Selection s = picker.pick(registry.snapshot(), new PickRequest(MODEL, Set.of(NS), 64, prompt));
            assertThat(s).isNotNull();
            assertThat(s.decode().worker().instanceId()).isEqualTo(6);
            s.dispatch().ended();
        }
        assertThat(meters.get("continuum.dynamo.kv.selection").tag("result", "overlap").counter().count())
                .isEqualTo(4);

        // dynamo.kv.enabled reloaded off: the subscription stops and its ranks leave the index; on again: back.
        kv.enabled(false);
        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().isEmpty());
        await().atMost(Duration.ofSeconds(20)).until(() -> held() == 0);
        kv.enabled(true);
        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                .anyMatch(s -> s.state() == SubscriptionState.CONNECTED));
        storeUntilIndexed();

        // The channel leaves discovery: its subscription stops, and what it delivered leaves the index.
        assertThat(discovery.publish(FleetView.of(workers, List.of()))).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().isEmpty() && kv.publishers() == 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> held() == 0);
        assertThat(gauge("connected")).isZero();
    }

    /** Binds the publisher, follows a registry naming it and workers 5 and 6; returns once subscribed. */
    private String subscribe(List<DynamoWorker> workers) {
        pub.setLinger(0);
        pub.bind("tcp://127.0.0.1:*");
        String address = pub.getLastEndpoint().replace("0.0.0.0", "127.0.0.1");
        DynamoPublisher channel = new DynamoPublisher(new PublisherId(NS, PUBLISHER), PublisherTopic.KV_EVENTS,
                "backend", null, address);
        writer.start().join();
        kv.start().join();
        following = kv.follow(registry);
        registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of(NS), FleetView.of(workers, List.of(channel)));
        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                .anyMatch(s -> s.state() == SubscriptionState.CONNECTED));
        return address;
    }

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    void aPublisherGoneForSixtySecondsLosesItsRanksOnceAndRegainsThemWhenItReturns() {
        String address = subscribe(List.of(aggregated(5), aggregated(6)));
        storeUntilIndexed();

        try (LogCapture log = LogCapture.of(StaleSubscriptions.class)) {
            // The publisher goes away: the subscription reconnects in vain, and keeps its ranks for 60 s.
            pub.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                    .noneMatch(s -> s.state() == SubscriptionState.CONNECTED));
            clock.addAndGet(59 * SECOND);
            assertThat(kv.sweepStale()).isZero();
            assertThat(held()).isEqualTo(4);

            // At 60 s its ranks leave the index, once, with one warning naming it.
            clock.addAndGet(SECOND);
            await().atMost(Duration.ofSeconds(10)).until(() -> held() == 0);
            clock.addAndGet(600 * SECOND);
            assertThat(kv.sweepStale()).isZero();
            assertThat(log.warnings()).singleElement().asString()
                    .contains(Long.toUnsignedString(PUBLISHER), "namespace dynamo", "60 s");

            // It comes back on the same address: the same subscription reconnects and the rank rebuilds.
            pub = zmq.createSocket(SocketType.PUB);
            pub.setLinger(0);
            pub.bind(address);
            await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                    .anyMatch(s -> s.state() == SubscriptionState.CONNECTED));
            storeUntilIndexed();

            // A second outage is a new one: 60 s from its own start.
            pub.close();
            await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                    .noneMatch(s -> s.state() == SubscriptionState.CONNECTED));
            clock.addAndGet(30 * SECOND);
            assertThat(kv.sweepStale()).isZero();
            assertThat(held()).isEqualTo(4);
            clock.addAndGet(30 * SECOND);
            await().atMost(Duration.ofSeconds(10)).until(() -> held() == 0);
            assertThat(log.warnings()).hasSize(2);
        }
    }

    @Test
    void aTransportSwitchKeepsRanksAndCursorsAndPendingCountsTowardsTheCutOff() {
        subscribe(List.of(aggregated(5), aggregated(6)));
        eventId = 10; // so that events below the cursor exist
        storeUntilIndexed();
        LoadConfig broker = new LoadConfig(LoadConfig.DEFAULTS.maxStaleness(), Transport.BROKER, null);

        // dynamo.load.transport reloaded to broker in a build without the bus: the subscription restarts and
        // stays pending, and what it fed stays in the index while it is young.
        kv.reconfigure(broker);
        awaitPendingOverTheBroker();
        assertThat(held()).isEqualTo(4);
        clock.addAndGet(59 * SECOND);
        assertThat(kv.sweepStale()).isZero();
        assertThat(held()).isEqualTo(4);

        // Back to direct before the cut-off: the new subscription carries on from the old cursor, so an event
        // older than the last applied one is a replay, not a store of other blocks.
        kv.reconfigure(LoadConfig.DEFAULTS);
        await().atMost(Duration.ofSeconds(20)).until(() -> kv.subscriptions().stream()
                .anyMatch(s -> s.transport() == Transport.DIRECT && s.state() == SubscriptionState.CONNECTED));
        // Below every ID storeUntilIndexed sent: whichever of those were applied (the last one may have been lost
        // with the old connection), this one is older than the cursor.
        long stale = 5;
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            send(KvWire.message(PUBLISHER, stale, KvWire.stored(6, stale, 0, null, new long[] {90},
                    new long[] {0x9999})));
            return writer.metrics().total(KvEventResult.REPLAY) > 0;
        });
        assertThat(held()).isEqualTo(4);
        OverlapScores out = new OverlapScores(16);
        writer.index().findMatches(new BlockHashes(16, new long[] {0x9999}), out);
        assertThat(out.matchedBlocksOf(6, 0)).as("the old event's block was not stored").isZero();
        clock.addAndGet(10 * SECOND);
        assertThat(kv.sweepStale()).as("a reconnected publisher is not stale").isZero();

        // Pending for 60 s counts as out of session: the ranks leave.
        kv.reconfigure(broker);
        awaitPendingOverTheBroker();
        clock.addAndGet(60 * SECOND);
        await().atMost(Duration.ofSeconds(10)).until(() -> held() == 0);
    }

    private void awaitPendingOverTheBroker() {
        await().atMost(Duration.ofSeconds(20)).until(() -> !kv.subscriptions().isEmpty() && kv.subscriptions()
                .stream().allMatch(s -> s.transport() == Transport.BROKER && s.state() == SubscriptionState.PENDING));
    }

    @Test
    void theSubscriptionCapAdmitsTheLowestPublisherIds() {
        KvSupervisor capped = KvSupervisor.builder(writer, new SimpleMeterRegistry()).maxSubscriptions(2).build();
        capped.start().join();
        try {
            List<DynamoPublisher> channels = List.of(3L, 1L, 2L).stream().map(id -> new DynamoPublisher(
                    new PublisherId(NS, id), PublisherTopic.KV_EVENTS, "backend", null,
                    "tcp://127.0.0.1:9")).toList();
            MutableDynamoRegistry.Writer w = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of(NS),
                    FleetView.of(List.of(aggregated(5)), channels));
            capped.update(registry.snapshot());
            assertThat(capped.subscriptions()).extracting(SubscriptionView::publisherId).containsExactly(1L, 2L);
            assertThat(capped.publishers()).isEqualTo(3);
            assertThat(w).isNotNull();
        } finally {
            capped.stop().join();
        }
    }
}
