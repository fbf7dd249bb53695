package dev.continuum.router.kv.dispatch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.kv.config.KvConfig;
import dev.continuum.router.kv.index.PredictedBlocks;
import dev.continuum.router.kv.index.SampledChain;
import dev.continuum.router.load.SampleKey;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import dev.continuum.router.shim.SharedPredictions;
import dev.continuum.router.shim.WorkerPin;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Which mode each namespace runs and why, and the TTL and capacity a pick is predicted with. */
class KvModesTest {
    private static final Instant T0 = Instant.parse("2026-12-07T00:00:00Z");
    private static final long SECOND = 1_000_000_000L;

    private final AtomicLong now = new AtomicLong(100 * SECOND);
    private final AtomicReference<KvConfig> config = new AtomicReference<>(KvConfig.DEFAULTS);
    private final PredictedBlocks predicted = new PredictedBlocks(42, now::get, PredictedBlocks.Counts.NONE);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicReference<DynamoSnapshot> snapshot = new AtomicReference<>(fleet());
    private final KvModes modes = new KvModes(config::get, snapshot::get, predicted, registry);

    private static DynamoWorker worker(String ns, long id, long totalKvBlocks) {
        ModelCard card = new ModelCard("m", null, false, 16, new ModelCard.WorkerCapacity(totalKvBlocks, 1000L, 256L,
                32768L), null, null, null, ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(ns, id), WorkerRole.AGGREGATED, "backend", "generate", card, T0, T0);
    }

    /** Namespace "fed" has a kv-events publisher, "blind" has none; the blind worker holds 3 blocks at most. */
    private static DynamoSnapshot fleet() {
        DynamoPublisher events = new DynamoPublisher(new PublisherId("fed", 7), PublisherTopic.KV_EVENTS, "backend",
                null, "tcp://127.0.0.1:5557");
        return new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("fed", "blind"), 1, true,
                FleetView.of(List.of(worker("fed", 1, 1000), worker("blind", 2, 3)), List.of(events)));
    }

    private void mode(KvConfig.Mode mode, Duration predictedTtl) {
        KvConfig d = KvConfig.DEFAULTS;
        config.set(new KvConfig(d.enabled(), d.allowHttpArtifacts(), d.allowHfArtifacts(), d.pinnedArtifacts(),
                d.artifactCacheDir(), d.sendTokenData(), d.overlapScoreCredit(), d.prefillLoadScale(),
                d.routerTemperature(), d.conditionalDisaggregation(), mode, predictedTtl, d.approximateTtl(),
                d.segmentCacheBytes()));
    }

    private static WorkerPin pin(String ns, long id) {
        return new WorkerPin(new WorkerId(ns, id), WorkerRole.AGGREGATED, 0, false);
    }

    private int depth(long worker, long... hashes) {
        OverlapScores out = new OverlapScores(8);
        out.clear();
        predicted.deepen(hashes, out);
        return out.matchedBlocksOf(worker, 0);
    }

    private double gauge(String mode, String reason) {
        return registry.get("continuum.dynamo.kv.mode.namespaces").tag("mode", mode).tag("reason", reason).gauge()
                .value();
    }

    @Test
    void autoRunsPreciseWithKvEventsAndApproximateWithout() {
        assertThat(modes.modes()).containsExactly(new KvModes.NamespaceMode("blind", "approximate", "no_kv_events"),
                new KvModes.NamespaceMode("fed", "precise", "kv_events"));
        assertThat(gauge("approximate", "no_kv_events")).isEqualTo(1);
        assertThat(gauge("precise", "kv_events")).isEqualTo(1);
        assertThat(modes.approximate("blind", false)).isTrue();
        assertThat(modes.approximate("fed", true)).isFalse();

        mode(KvConfig.Mode.PRECISE, KvConfig.DEFAULT_PREDICTED_TTL);
        assertThat(modes.modes()).extracting(KvModes.NamespaceMode::reason).containsOnly("configured");
        assertThat(modes.approximate("blind", false)).isFalse();
        assertThat(gauge("precise", "configured")).isEqualTo(2);
        mode(KvConfig.Mode.APPROXIMATE, KvConfig.DEFAULT_PREDICTED_TTL);
        assertThat(modes.approximate("fed", true)).isTrue();
        assertThat(gauge("approximate", "configured")).isEqualTo(2);
    }

    @Test
    void aPickIsPredictedWithItsModesTtlWithinTheCardsCapacity() {
        modes.picked(pin("fed", 1), new BlockHashes(16, new long[] {1, 2, 3, 4}));
        modes.picked(pin("blind", 2), new BlockHashes(16, new long[] {1, 2, 3, 4, 5}));
        assertThat(depth(1, 1, 2, 3, 4)).isEqualTo(4);
        assertThat(depth(2, 1, 2, 3, 4, 5)).as("total_kv_blocks 3").isEqualTo(3);

        now.addAndGet(6 * SECOND);
        assertThat(depth(1, 1, 2, 3, 4)).as("precise: predicted_ttl 5 s").isZero();
        assertThat(depth(2, 1, 2, 3)).as("approximate: approximate_ttl 120 s").isEqualTo(3);
        now.addAndGet(115 * SECOND);
        assertThat(depth(2, 1, 2, 3)).isZero();

        mode(KvConfig.Mode.AUTO, Duration.ZERO);
        modes.picked(pin("fed", 1), new BlockHashes(16, new long[] {1, 2, 3, 4}));
        assertThat(depth(1, 1, 2, 3, 4)).as("predicted_ttl 0: no prediction where kv-events run").isZero();
    }

    @Test
    void theSenderSamplesAPromptTheLookupChainedFromTheLookupAndTheSameAsItWouldItself() {
        PredictionSharing sharing = new PredictionSharing(modes);
        SampleKey blind = new SampleKey(new WorkerId("blind", 2), 0);
        long[] h = new long[100];
        for (int i = 0; i < h.length; i++) {
            h[i] = 31L * i + 7;
        }
        BlockHashes prompt = new BlockHashes(16, h);
        assertThat(sharing.sample(new SampleKey(new WorkerId("fed", 1), 0), prompt)).as("precise: none").isNull();
        SharedPredictions.Sample chained = sharing.sample(blind, prompt);
        assertThat(chained).as("no lookup chained it: the sender does").isNotNull();
        assertThat(chained.stride()).isEqualTo(16);
        assertThat(chained.keys()).containsExactly(SampledChain.sample(h, h.length, 16));

        modes.peerPredicted(1, new WorkerId("blind", 2), 0, 16, new long[] {99});
        predicted.deepen(h, new OverlapScores(8)); // a peer's sample held: the lookup chains the prompt
        SharedPredictions.Sample looked = sharing.sample(blind, prompt);
        assertThat(looked).isNotNull();
        assertThat(looked.stride()).isEqualTo(chained.stride());
        assertThat(looked.keys()).containsExactly(chained.keys());
        assertThat(predicted.sampledByWalk().take(h)).as("the sender took the lookup's keys").isNull();

        // What the sender takes is the lookup's (here a marker), for this very array only.
        predicted.sampledByWalk().put(h, new long[] {5, 6}, 2);
        assertThat(sharing.sample(blind, new BlockHashes(16, h.clone())).keys()).containsExactly(chained.keys());
        assertThat(sharing.sample(blind, prompt).keys()).containsExactly(5, 6);
    }
}
