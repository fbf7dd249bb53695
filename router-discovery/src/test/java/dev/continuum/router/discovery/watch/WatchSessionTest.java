package dev.continuum.router.discovery.watch;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.MutableDynamoRegistry;
import dev.continuum.router.discovery.config.BackoffConfig;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.DiscoveryReducer;
import dev.continuum.router.testing.LogCapture;
import dev.continuum.router.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class WatchSessionTest {
    private static final Duration SHORT = Duration.ofMillis(5);

    private final MutableClock clock = MutableClock.atSeedExampleTime();
    private final AtomicLong nanos = new AtomicLong();
    private final MutableDynamoRegistry registry = MutableDynamoRegistry.create();
    private final ScriptedSource source = new ScriptedSource();
    private DiscoveryWatcher watcher;

    private DiscoveryWatcher start(BackoffConfig backoff) {
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("dynamo"), FleetView.empty());
        DiscoveryReducer reducer = DiscoveryReducer.create(List.of("dynamo"), clock, DiscoveryCounters.NONE);
        watcher = new DiscoveryWatcher(source, reducer, writer, new Backoff(backoff), Duration.ofSeconds(5), nanos::get);
        watcher.start();
        return watcher;
    }

    private DiscoveryWatcher start() {
        return start(new BackoffConfig(SHORT, SHORT.multipliedBy(4)));
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (watcher != null) {
            assertThat(watcher.stop(Duration.ofSeconds(5))).isTrue();
        }
    }

    private static DiscoveryEvent.Put worker(long id, String component) {
        return DiscoveryEvent.Put.of(endpointKey("dynamo", component, "generate", id),
                endpoint("dynamo", component, "generate", id));
    }

    private List<Long> workerIds() {
        return registry.snapshot().workers().stream().map(DynamoWorker::instanceId).toList();
    }

    @Test
    void theSeedIsPublishedThenPutsAndDeletesFoldIn() {
        source.thenSeed(List.of(worker(1, "prefill"), worker(2, "decode")));
        start();
        var pass = source.awaitPass(1);
        assertThat(workerIds()).containsExactly(1L, 2L);
        assertThat(registry.snapshot().connected()).as("watches not open yet").isFalse();

        pass.open();
        await().until(() -> registry.snapshot().connected());
        pass.emit(worker(3, "decode"), new DiscoveryEvent.Delete(endpointKey("dynamo", "prefill", "generate", 1)));
        await().until(() -> workerIds().equals(List.of(2L, 3L)));
        pass.emit(DiscoveryEvent.Put.of(cardKey("dynamo", "decode", "generate", 3),
                model("dynamo", "decode", "generate", 3, card("Qwen/Qwen3-32B", "Decode"))));
        await().until(() -> "Qwen/Qwen3-32B".equals(registry.snapshot().worker("dynamo", 3).orElseThrow().model()));
    }

    @Test
    void anyEndOfThePassDisconnectsAndAFullResyncRecovers() {
        // Pass 1 knows workers 1 and 2; while disconnected, 1 left and 4 joined: only the resync can tell.
        source.thenSeed(List.of(worker(1, "decode"), worker(2, "decode")))
                .thenSeed(List.of(worker(2, "decode"), worker(4, "decode")));
        start();
        var first = source.awaitPass(1);
        first.open();
        await().until(() -> registry.snapshot().connected());
        first.end("watch of v1/instances/dynamo/ ended: watch start revision compacted (compact revision 42)");
        await().until(() -> first.closed);

        var second = source.awaitPass(2);
        await().until(() -> workerIds().equals(List.of(2L, 4L)));
        second.open();
        await().until(() -> registry.snapshot().connected());
    }

    @Test
    void firstSeenSurvivesReconnectsAndAnIdempotentResyncBumpsNothing() {
        List<DiscoveryEvent.Put> fleet = List.of(worker(1, "prefill"), worker(2, "decode"));
        source.thenSeed(fleet);
        start();
        var first = source.awaitPass(1);
        first.open();
        await().until(() -> registry.snapshot().connected());
        Instant firstSeen = registry.snapshot().worker("dynamo", 1).orElseThrow().firstSeen();
        long generation = registry.generation();
        var view = registry.snapshot().fleet();

        clock.advance(Duration.ofMinutes(10));
        source.thenSeed(fleet);
        first.end("connection lost");
        var second = source.awaitPass(2);
        second.open();
        await().until(() -> registry.snapshot().connected());

        assertThat(registry.generation()).isEqualTo(generation);
        assertThat(registry.snapshot().fleet()).isSameAs(view);
        assertThat(registry.snapshot().worker("dynamo", 1).orElseThrow().firstSeen()).isEqualTo(firstSeen);
    }

    @Test
    void theViewStaysReadableWhileDisconnected() {
        source.thenSeed(List.of(worker(1, "decode")));
        start();
        var pass = source.awaitPass(1);
        pass.open();
        await().until(() -> registry.snapshot().connected());
        pass.end("etcd went away");
        await().until(() -> !registry.snapshot().connected());
        assertThat(workerIds()).containsExactly(1L);
    }

    @Test
    void aFailedConnectBacksOffAndRetries() {
        source.thenFail("connection refused").thenFail("connection refused").thenSeed(List.of(worker(7, "decode")));
        start();
        await().until(() -> workerIds().equals(List.of(7L)));
        assertThat(source.opens).isEqualTo(3);
    }

    @Test
    void theBackoffResetsOnlyAfterAllWatchesStayedOpenForMax() {
        try (LogCapture logs = LogCapture.of(DiscoveryWatcher.class)) {
            source.thenFail("refused").thenFail("refused").thenSeed(List.of());
            start(new BackoffConfig(Duration.ofMillis(10), Duration.ofMillis(40)));
            var third = source.awaitPass(1);
            third.open();
            await().until(() -> registry.snapshot().connected());
            nanos.addAndGet(Duration.ofMillis(39).toNanos());
            source.thenSeed(List.of());
            third.end("closed by proxy");
            var fourth = source.awaitPass(2);
            fourth.open();
            await().until(() -> registry.snapshot().connected());
            nanos.addAndGet(Duration.ofMillis(40).toNanos());
            source.thenSeed(List.of());
            fourth.end("closed after a long session");
            source.awaitPass(3);

            assertThat(logs.messages(ch.qos.logback.classic.Level.INFO)).filteredOn(l -> l.contains("reconnects in"))
                    .extracting(l -> l.replaceAll(".* reconnects in (\\d+) ms", "$1"))
                    .containsExactly("10", "20", "40", "10");
        }
    }

    @Test
    void aFloodOfEventsEndsThePassInsteadOfGrowingWithoutBound() {
        source.thenSeed(List.of()).thenSeed(List.of(worker(1, "decode")));
        start();
        var first = source.awaitPass(1);
        first.open();
        List<DiscoveryEvent> flood = new ArrayList<>();
        for (int i = 0; i <= DiscoveryWatcher.MAX_PENDING_EVENTS; i++) {
            flood.add(new DiscoveryEvent.Delete("v1/instances/dynamo/x/generate/" + i));
        }
        first.emit(flood);
        source.awaitPass(2);
        await().until(() -> workerIds().equals(List.of(1L)));
    }

    @Test
    void stoppingInterruptsAPassThatIsStillConnecting() throws InterruptedException {
        start();
        await().until(() -> source.opens == 1);
        assertThat(watcher.stop(Duration.ofSeconds(5))).isTrue();
        watcher = null;
    }

    @Test
    void aStoppedWatcherClosesItsPass() throws InterruptedException {
        source.thenSeed(List.of(worker(1, "decode")));
        start();
        var pass = source.awaitPass(1);
        pass.open();
        await().until(() -> registry.snapshot().connected());
        assertThat(watcher.stop(Duration.ofSeconds(5))).isTrue();
        watcher = null;
        assertThat(pass.closed).isTrue();
        assertThat(registry.snapshot().connected()).isFalse();
    }

    @Test
    void aKeyRefusedAtCapacityIsReadAgainAndAdmittedAsSoonAsRoomFrees() {
        var writer = registry.reconfigure(true, DiscoverySourceKind.ETCD, List.of("dynamo"), FleetView.empty());
        DiscoveryReducer reducer = DiscoveryReducer.create(List.of("dynamo"),
                new dev.continuum.router.discovery.reducer.DiscoveryLimits(4096, 1024, 2), clock,
                DiscoveryCounters.NONE, FleetView.empty());
        watcher = new DiscoveryWatcher(source, reducer, writer, new Backoff(new BackoffConfig(SHORT, SHORT)),
                Duration.ofSeconds(5), nanos::get);
        // Two hostile keys sort before the real worker's and fill the keyspace at startup.
        source.thenSeed(List.of(worker(1, "decode"), worker(2, "decode"), worker(0xfeed, "decode")));
        watcher.start();
        var pass = source.awaitPass(1);
        pass.open();
        await().until(() -> registry.snapshot().connected());
        assertThat(workerIds()).containsExactly(1L, 2L);

        pass.emit(new DiscoveryEvent.Delete(endpointKey("dynamo", "decode", "generate", 1)));

        // No new put of the real worker's key: the watcher reads it back as soon as the room is there.
        await().until(() -> workerIds().equals(List.of(2L, 0xfeedL)));
        assertThat(pass.rereads).containsExactly(List.of(endpointKey("dynamo", "decode", "generate", 0xfeed)));
        assertThat(source.passes).hasSize(1);
    }
}
