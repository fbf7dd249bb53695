package dev.continuum.router.load;

import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.load.wire.ActiveLoad;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoadStoreTest {
    private final ManualTicker ticker = new ManualTicker();
    private final ConcurrentLoadStore store = new ConcurrentLoadStore(ticker, 4);

    private static ActiveLoad load(long worker, long rank, long kvUsed) {
        return new ActiveLoad(worker, rank, null, null, null, kvUsed);
    }

    @Test
    void keepsTheLatestSamplePerWorkerAndRankWithItsReceiptTime() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        assertThat(store.apply("dynamo", 9, 0, load(1, 0, 10))).isEqualTo(LoadEventResult.APPLIED);
        assertThat(store.apply("dynamo", 9, 1, load(1, 1, 20))).isEqualTo(LoadEventResult.APPLIED);
        ticker.advance(Duration.ofMillis(5));
        assertThat(store.apply("dynamo", 9, 2, load(1, 0, 30))).isEqualTo(LoadEventResult.APPLIED);

        assertThat(store.latest(worker(1), 0).load().kvUsedBlocks()).isEqualTo(30L);
        assertThat(store.latest(worker(1), 1).load().kvUsedBlocks()).isEqualTo(20L);
        assertThat(store.age(store.latest(worker(1), 1))).isEqualTo(Duration.ofMillis(5));
        assertThat(store.size()).isEqualTo(2);
    }

    @Test
    void answersFreshOnlyWithinTheMaximumAgeAndFreshDefaultFollowsTheLiveSetting() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, 0, load(1, 0, 10));
        ticker.advance(Duration.ofSeconds(3));
        assertThat(store.freshDefault(worker(1), 0)).isNotNull();
        assertThat(store.fresh(worker(1), 0, Duration.ofMillis(2999))).isNull();

        ticker.advance(Duration.ofNanos(1));
        assertThat(store.freshDefault(worker(1), 0)).isNull();
        store.maxStaleness(Duration.ofSeconds(10));
        assertThat(store.freshDefault(worker(1), 0)).isNotNull();
        assertThat(store.latest(worker(1), 0)).isNotNull();
    }

    @Test
    void dropsSequencesAtOrBelowTheHeldOneFromTheSamePublisher() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, 5, load(1, 0, 10));

        assertThat(store.apply("dynamo", 9, 5, load(1, 0, 11))).isEqualTo(LoadEventResult.DUPLICATE);
        assertThat(store.apply("dynamo", 9, 4, load(1, 0, 12))).isEqualTo(LoadEventResult.DUPLICATE);
        assertThat(store.latest(worker(1), 0).load().kvUsedBlocks()).isEqualTo(10L);
    }

    @Test
    void letsARestartedPublisherReplaceTheHeldSampleWhateverItsSequence() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, 500, load(1, 0, 10));

        assertThat(store.apply("dynamo", 10, 0, load(1, 0, 99))).isEqualTo(LoadEventResult.APPLIED);
        assertThat(store.latest(worker(1), 0).publisherId()).isEqualTo(10);
    }

    @Test
    void comparesSequencesUnsigned() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, Long.MAX_VALUE, load(1, 0, 10));

        assertThat(store.apply("dynamo", 9, Long.MIN_VALUE, load(1, 0, 11))).isEqualTo(LoadEventResult.APPLIED);
    }

    @Test
    void admitsOnlyLiveWorkersOfThePublishersNamespace() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));

        assertThat(store.apply("dynamo", 9, 0, load(2, 0, 10))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
        assertThat(store.apply("canary", 9, 0, load(1, 0, 10))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
        assertThat(store.size()).isZero();
    }

    @Test
    void refusesNewKeysPastTheCapButStillUpdatesHeldOnes() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        for (int rank = 0; rank < 4; rank++) {
            assertThat(store.apply("dynamo", 9, rank, load(1, rank, 1))).isEqualTo(LoadEventResult.APPLIED);
        }

        assertThat(store.apply("dynamo", 9, 10, load(1, 4, 1))).isEqualTo(LoadEventResult.OVER_CAPACITY);
        assertThat(store.apply("dynamo", 9, 11, load(1, 3, 2))).isEqualTo(LoadEventResult.APPLIED);
        assertThat(store.size()).isEqualTo(4);
    }

    @Test
    void evictsDepartedWorkersWhenTheLiveSetChanges() {
        store.setLiveAndRetain(Fixtures.live(worker(1), worker(2)));
        store.apply("dynamo", 9, 0, load(1, 0, 1));
        store.apply("dynamo", 9, 1, load(2, 0, 1));

        store.setLiveAndRetain(Fixtures.live(worker(2)));

        assertThat(store.latest(worker(1), 0)).isNull();
        assertThat(store.latest(worker(2), 0)).isNotNull();
        assertThat(store.size()).isEqualTo(1);
        assertThat(store.apply("dynamo", 9, 2, load(1, 0, 1))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
    }

    @Test
    void dropsOnlyThePublishersOwnSamples() {
        store.setLiveAndRetain(Fixtures.live(worker(1)));
        store.apply("dynamo", 9, 0, load(1, 0, 1));
        store.apply("dynamo", 10, 0, load(1, 1, 1));

        store.dropPublisher(List.of(new SampleKey(worker(1), 0), new SampleKey(worker(1), 1)), 9);

        assertThat(store.latest(worker(1), 0)).isNull();
        assertThat(store.latest(worker(1), 1)).isNotNull();
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void admitsOnlyTheRanksTheGateDeclaresAndEvictsRanksADeclarationDrops() {
        store.setLiveAndRetain(java.util.Map.of(worker(1), new DpRanks(2, 2)));
        assertThat(store.apply("dynamo", 9, 0, load(1, 1, 1))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
        assertThat(store.apply("dynamo", 9, 1, load(1, 2, 1))).isEqualTo(LoadEventResult.APPLIED);
        assertThat(store.apply("dynamo", 9, 2, load(1, 3, 1))).isEqualTo(LoadEventResult.APPLIED);
        assertThat(store.apply("dynamo", 9, 3, load(1, 4, 1))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);
        assertThat(store.apply("dynamo", 9, 4, load(1, 0xFFFF_FFFFL, 1))).isEqualTo(LoadEventResult.IDENTITY_MISMATCH);

        store.setLiveAndRetain(java.util.Map.of(worker(1), new DpRanks(3, 1)));

        assertThat(store.latest(worker(1), 2)).isNull();
        assertThat(store.latest(worker(1), 3)).isNotNull();
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void aCardWithoutDataParallelSizeDeclaresRankZeroOnly() {
        assertThat(DpRanks.of(null)).isEqualTo(DpRanks.RANK_ZERO);
        assertThat(DpRanks.of(card(5, null))).isEqualTo(DpRanks.RANK_ZERO);
        assertThat(DpRanks.of(card(null, 4))).isEqualTo(new DpRanks(0, 4));
        assertThat(DpRanks.of(card(8, 4))).isEqualTo(new DpRanks(8, 4));
        assertThat(new DpRanks(Integer.MAX_VALUE, Integer.MAX_VALUE).admits(0xFFFF_FFFDL)).isTrue();
    }

    private static dev.continuum.router.discovery.ModelCard card(@Nullable Integer start, @Nullable Integer size) {
        return new dev.continuum.router.discovery.ModelCard("m", null, false, null,
                dev.continuum.router.discovery.ModelCard.WorkerCapacity.UNKNOWN, start, size, null,
                dev.continuum.router.discovery.ModelCard.CardArtifacts.NONE, null, null);
    }
}
