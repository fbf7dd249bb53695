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
import dev.continuum.router.kv.index.KvIndexWriter;
import dev.continuum.router.load.LoadSupervisor;
import dev.continuum.router.load.SubscriptionState;
import dev.continuum.router.load.SubscriptionView;
import dev.continuum.router.load.zmtp.ZmtpMessage;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.KvPickerSettings;
import dev.continuum.router.shim.LoadBasedPicking;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.PromptBlocks;
import dev.continuum.router.shim.Selection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
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
    private final ZMQ.Socket pub = zmq.createSocket(SocketType.PUB);
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final KvIndexWriter writer = new KvIndexWriter(meters, IndexLimits.DEFAULT);
    private final KvSupervisor kv = KvSupervisor.builder(writer, meters).build();
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
