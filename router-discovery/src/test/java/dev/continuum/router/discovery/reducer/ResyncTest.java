package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ResyncTest {
    private static final String[] FLEET = {
            endpointKey("dynamo", "prefill", "generate", 1), endpoint("dynamo", "prefill", "generate", 1),
            cardKey("dynamo", "prefill", "generate", 1), model("dynamo", "prefill", "generate", 1, card("m", "Prefill")),
            endpointKey("dynamo", "decode", "generate", 2), endpoint("dynamo", "decode", "generate", 2),
            cardKey("dynamo", "decode", "generate", 2), model("dynamo", "decode", "generate", 2, card("m", "Decode")),
            channelKey("dynamo", "decode", "generate", "kv_metrics", 20),
            channel("dynamo", "decode", "generate", "kv_metrics", 20, "tcp://10.0.0.2:4000")};

    @Test
    void anIdempotentResyncChangesNothing() {
        ReducerHarness h = new ReducerHarness();
        assertThat(h.resync(FLEET)).isTrue();
        FleetView before = h.view();
        h.clock.advance(Duration.ofMinutes(5));
        assertThat(h.resync(FLEET)).isFalse();
        assertThat(h.view()).isSameAs(before);
    }

    @Test
    void aResyncDropsEveryHeldKeyItDoesNotList() {
        ReducerHarness h = new ReducerHarness();
        h.resync(FLEET);
        h.put(endpointKey("dynamo", "decode", "generate", 3), endpoint("dynamo", "decode", "generate", 3));
        assertThat(h.workers()).hasSize(3);
        // Missed while disconnected: worker 1's lease expired, worker 3's too; the resync lists neither.
        assertThat(h.resync(endpointKey("dynamo", "decode", "generate", 2), endpoint("dynamo", "decode", "generate", 2),
                cardKey("dynamo", "decode", "generate", 2), model("dynamo", "decode", "generate", 2, card("m", "Decode"))))
                .isTrue();
        assertThat(h.workers()).extracting(DynamoWorker::instanceId).containsExactly(2L);
        assertThat(h.view().publishers()).isEmpty();
    }

    @Test
    void firstSeenSurvivesResyncsWhileLastUpdatedFollowsChanges() {
        ReducerHarness h = new ReducerHarness();
        Instant start = h.clock.instant();
        h.resync(FLEET);
        h.clock.advance(Duration.ofMinutes(8));
        String[] changed = FLEET.clone();
        changed[7] = model("dynamo", "decode", "generate", 2, card("m2", "Decode"));
        assertThat(h.resync(changed)).isTrue();

        DynamoWorker unchanged = h.worker(1).orElseThrow();
        DynamoWorker updated = h.worker(2).orElseThrow();
        assertThat(unchanged.firstSeen()).isEqualTo(start);
        assertThat(unchanged.lastUpdated()).isEqualTo(start);
        assertThat(updated.firstSeen()).isEqualTo(start);
        assertThat(updated.lastUpdated()).isEqualTo(start.plus(Duration.ofMinutes(8)));
        assertThat(updated.model()).isEqualTo("m2");
    }

    @Test
    void aWorkerThatLeftAndCameBackIsSeenAfresh() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", 2);
        h.put(key, endpoint("dynamo", "decode", "generate", 2));
        h.delete(key);
        h.clock.advance(Duration.ofSeconds(30));
        h.put(key, endpoint("dynamo", "decode", "generate", 2));
        assertThat(h.worker(2).orElseThrow().firstSeen()).isEqualTo(h.clock.instant());
    }

    @Test
    void carriedOverFirstSeenIsUsedForKnownWorkers() {
        Instant earlier = Instant.parse("2026-01-01T00:00:00Z");
        ReducerHarness h = new ReducerHarness();
        DiscoveryReducer reducer = DiscoveryReducer.create(List.of("dynamo"), DiscoveryLimits.defaults(), h.clock,
                h.counters, Map.of(new WorkerId("dynamo", 2), earlier));
        reducer.apply(new DiscoveryEvent.Resync(List.of(
                DiscoveryEvent.Put.of(endpointKey("dynamo", "decode", "generate", 2), endpoint("dynamo", "decode", "generate", 2)),
                DiscoveryEvent.Put.of(endpointKey("dynamo", "decode", "generate", 3), endpoint("dynamo", "decode", "generate", 3)))));
        assertThat(reducer.view().worker(new WorkerId("dynamo", 2)).orElseThrow().firstSeen()).isEqualTo(earlier);
        assertThat(reducer.view().worker(new WorkerId("dynamo", 3)).orElseThrow().firstSeen()).isEqualTo(h.clock.instant());
    }

    @Test
    void theViewIsSortedByNamespaceThenUnsignedInstanceId() {
        ReducerHarness h = new ReducerHarness("b", "a");
        h.resync(endpointKey("b", "d", "generate", 1), endpoint("b", "d", "generate", 1),
                endpointKey("a", "d", "generate", -1), endpoint("a", "d", "generate", -1),
                endpointKey("a", "d", "generate", 16), endpoint("a", "d", "generate", 16),
                endpointKey("a", "d", "generate", 2), endpoint("a", "d", "generate", 2));
        assertThat(h.workers()).extracting(w -> w.id().toString())
                .containsExactly("a/2", "a/10", "a/ffffffffffffffff", "b/1");
    }

    @Test
    void aResyncWithTheSameKeyTwiceUsesTheLastValue() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", 2);
        h.resync(key, endpoint("dynamo", "decode", "generate", 2), key, endpoint("dynamo", "prefill", "generate", 2));
        assertThat(h.worker(2).orElseThrow().component()).isEqualTo("prefill");
    }
}
