package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.kv.events.KvWire;
import dev.continuum.router.load.DpRanks;
import dev.continuum.router.shim.BlockHashes;
import dev.continuum.router.shim.OverlapScores;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The ingest as the KV supervisor uses it: framed messages in, a writer thread, the index read meanwhile. */
class KvIndexWriterTest {
    private static final PublisherId P = new PublisherId("dynamo", 0xFEED_0000_0000_0001L);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final KvIndexWriter writer = new KvIndexWriter(registry, IndexLimits.DEFAULT);

    @AfterEach
    void stop() {
        writer.stop().join();
    }

    @Test
    void framedMessagesReachTheIndexInOrder() {
        writer.start().join();
        writer.onFleet(Map.of(new WorkerId("dynamo", 5), DpRanks.RANK_ZERO), 1);
        long[] tokens = {1, 2, 3};
        writer.onMessage(P, KvWire.message(P.publisherId(), 0, KvWire.stored(5, 0, 0, null, new long[] {10, 11, 12},
                tokens)));
        writer.onMessage(P, KvWire.message(P.publisherId(), 1, KvWire.removed(5, 1, 0, 12)));
        OverlapScores out = new OverlapScores(4);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            writer.index().findMatches(new BlockHashes(16, tokens), out);
            assertThat(out.matchedBlocksOf(5, 0)).isEqualTo(2);
        });
        writer.onMessage(P, KvWire.message(0x1234, 2, KvWire.cleared(5, 2, 0))); // envelope of another publisher
        assertThat(writer.metrics().total(KvEventResult.IDENTITY_MISMATCH)).isEqualTo(1);
        writer.onSubscriptionClosed(P);
        await().atMost(Duration.ofSeconds(10)).until(() -> writer.index().nodes() == 0);
        assertThat(registry.get(KvIndexMetrics.EVENTS).tag("result", "indexed").counter().count()).isEqualTo(2);
    }

    @Test
    void aClosedSubscriptionsQueuedMessagesDoNotRefillItsRanks() {
        // Not started: the messages wait in the queue while the subscription closes behind them.
        writer.onFleet(Map.of(new WorkerId("dynamo", 5), DpRanks.RANK_ZERO), 1);
        long[] tokens = {1, 2, 3};
        writer.onMessage(P, KvWire.message(P.publisherId(), 0, KvWire.stored(5, 0, 0, null, new long[] {10, 11, 12},
                tokens)));
        writer.onSubscriptionClosed(P);
        // The publisher's next subscription: its messages are queued after the closure and count.
        writer.onMessage(P, KvWire.message(P.publisherId(), 0, KvWire.stored(5, 0, 0, null, new long[] {20},
                new long[] {7})));
        writer.start().join();

        OverlapScores out = new OverlapScores(4);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            writer.index().findMatches(new BlockHashes(16, new long[] {7}), out);
            assertThat(out.matchedBlocksOf(5, 0)).isEqualTo(1);
        });
        writer.index().findMatches(new BlockHashes(16, tokens), out);
        assertThat(out.size()).as("the closed subscription's blocks").isZero();
        assertThat(writer.index().nodes()).isEqualTo(1);
    }

    @Test
    void backToBackMegabyteFramesAreBoundedByTheQueue() {
        // Not started: nothing drains, so the byte bound is what holds the heap.
        writer.onFleet(Map.of(new WorkerId("dynamo", 5), DpRanks.RANK_ZERO), 1);
        long[] hashes = new long[KvWireSizes.BLOCKS_PER_MEGABYTE];
        java.util.Arrays.fill(hashes, -1L); // u64 max: nine bytes each
        byte[] payload = KvWire.removed(5, 0, 0, hashes);
        assertThat(payload.length).isBetween(900_000, KvIndexWriter.MAX_PAYLOAD_BYTES);
        int sent = 100;
        for (int i = 0; i < sent; i++) {
            writer.onMessage(P, KvWire.message(P.publisherId(), i, payload));
        }
        double full = writer.metrics().total(KvEventResult.QUEUE_FULL);
        assertThat(full).isEqualTo(sent - (int) (KvIndexWriter.QUEUE_BYTES / payload.length));
        writer.start().join();
        await().atMost(Duration.ofSeconds(30)).until(() -> writer.processed() >= sent - full);
        assertThat(writer.metrics().total(KvEventResult.MALFORMED)).as("over 8,192 blocks").isPositive();
    }

    @Test
    void payloadsAboveOneMebibyteAreRefusedBeforeParsing() {
        long[] hashes = new long[120_000];
        java.util.Arrays.fill(hashes, -1L);
        byte[] payload = KvWire.removed(5, 0, 0, hashes);
        writer.onMessage(P, KvWire.message(P.publisherId(), 0, payload));
        assertThat(writer.metrics().total(KvEventResult.OVERSIZED)).isEqualTo(1);
    }

    /** Removed block hashes of 9 bytes each (uint64 max): just under a megabyte of them. */
    private static final class KvWireSizes {
        static final int BLOCKS_PER_MEGABYTE = 110_000;
    }
}
