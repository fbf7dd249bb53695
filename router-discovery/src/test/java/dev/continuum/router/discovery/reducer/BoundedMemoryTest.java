package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.testing.LogCapture;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class BoundedMemoryTest {
    private static final long ID = 1736491;

    @Test
    void theCompiledInBoundsHaveTheSeedsValues() {
        assertThat(DiscoveryLimits.MAX_RECORD_BYTES).isEqualTo(16 * 1024 * 1024);
        assertThat(DiscoveryLimits.MAX_RETAINED_CARD_BYTES).isEqualTo(1024 * 1024);
        assertThat(DiscoveryLimits.MAX_RECORDS_PER_KEYSPACE).isEqualTo(16_384);
        assertThat(DiscoveryLimits.defaults()).isEqualTo(new DiscoveryLimits(16 * 1024 * 1024, 1024 * 1024, 16_384));
    }

    @Test
    void aSeventeenMebibyteValueIsRefusedBeforeParsing() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", ID);
        h.put(key, endpoint("dynamo", "decode", "generate", ID));
        // Not even JSON: a parser would fail, so a refusal that names the size proves nothing was parsed.
        byte[] huge = new byte[17 * 1024 * 1024];
        Arrays.fill(huge, (byte) '{');
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            assertThat(h.put(key, huge)).isTrue();
            assertThat(logs.warnings()).singleElement().asString().contains("17825792 bytes").contains("MAX_RECORD_BYTES");
        }
        assertThat(h.workers()).as("the key no longer holds a valid record").isEmpty();
        assertThat(h.count(DiscoveryEventKind.OVERSIZED)).isEqualTo(1);
        assertThat(h.count(DiscoveryEventKind.MALFORMED)).isZero();
    }

    @Test
    void aValueOfExactlyTheLimitIsParsed() {
        ReducerHarness h = new ReducerHarness(new DiscoveryLimits(400, 100, 10));
        String base = endpoint("dynamo", "decode", "generate", ID);
        String prefix = base.substring(0, base.length() - 1) + ",\"pad\":\"";
        String padded = prefix + "x".repeat(400 - prefix.length() - 2) + "\"}";
        assertThat(padded.getBytes(StandardCharsets.UTF_8)).hasSize(400);
        h.put(endpointKey("dynamo", "decode", "generate", ID), padded);
        assertThat(h.workers()).hasSize(1);
        h.put(endpointKey("dynamo", "decode", "generate", ID), padded.replace("\"}", "x\"}"));
        assertThat(h.workers()).isEmpty();
        assertThat(h.count(DiscoveryEventKind.OVERSIZED)).isEqualTo(1);
    }

    @Test
    void anOversizedCardDropsOnlyTheOpaqueBlob() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        String bigCard = "{\"display_name\":\"Qwen/Qwen3-32B\",\"worker_type\":\"Decode\",\"kv_cache_block_size\":64,"
                + "\"runtime_config\":{\"total_kv_blocks\":12000},\"user_data\":\"" + "x".repeat(1024 * 1024) + "\"}";
        h.put(cardKey("dynamo", "decode", "generate", ID), model("dynamo", "decode", "generate", ID, bigCard));
        var card = h.worker(ID).orElseThrow().card();
        assertThat(card.rawCard()).isNull();
        assertThat(card.model()).isEqualTo("Qwen/Qwen3-32B");
        assertThat(card.workerType()).isEqualTo("Decode");
        assertThat(card.kvCacheBlockSize()).isEqualTo(64);
        assertThat(card.capacity().totalKvBlocks()).isEqualTo(12000L);
    }

    @Test
    void aCardOfExactlyTheRetainedLimitIsKept() {
        ReducerHarness h = new ReducerHarness(new DiscoveryLimits(4096, 64, 10));
        String card = "{\"display_name\":\"" + "m".repeat(64 - 19) + "\"}";
        assertThat(card).hasSize(64);
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put(cardKey("dynamo", "decode", "generate", ID), model("dynamo", "decode", "generate", ID, card));
        assertThat(h.worker(ID).orElseThrow().card().rawCard()).isEqualTo(card);
        h.put(cardKey("dynamo", "decode", "generate", ID), model("dynamo", "decode", "generate", ID,
                card.replace("\"}", "m\"}")));
        assertThat(h.worker(ID).orElseThrow().card().rawCard()).isNull();
    }

    @Test
    void theKeyCapRefusesKey16385LoggedOnceWhileExistingKeysStillUpdate() {
        ReducerHarness h = new ReducerHarness();
        List<dev.continuum.router.discovery.reducer.DiscoveryEvent.Put> puts = new ArrayList<>();
        for (long id = 1; id <= DiscoveryLimits.MAX_RECORDS_PER_KEYSPACE; id++) {
            puts.add(DiscoveryEvent.Put.of(endpointKey("dynamo", "decode", "generate", id),
                    endpoint("dynamo", "decode", "generate", id)));
        }
        h.reducer.apply(new DiscoveryEvent.Resync(puts));
        assertThat(h.workers()).hasSize(16_384);

        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            assertThat(h.put(endpointKey("dynamo", "decode", "generate", 16_385),
                    endpoint("dynamo", "decode", "generate", 16_385))).isFalse();
            h.put(endpointKey("dynamo", "decode", "generate", 16_386), endpoint("dynamo", "decode", "generate", 16_386));
            assertThat(logs.warnings()).singleElement().asString().contains("v1/instances").contains("16384");
        }
        assertThat(h.count(DiscoveryEventKind.REFUSED)).isEqualTo(2);
        assertThat(h.workers()).hasSize(16_384);

        // An existing key still updates at capacity (a live worker's record changes).
        assertThat(h.put(endpointKey("dynamo", "decode", "generate", 7), endpoint("dynamo", "prefill", "generate", 7)
                .replace("\"component\":\"prefill\"", "\"component\":\"backend\""))).isTrue();
        assertThat(h.worker(7).orElseThrow().component()).isEqualTo("backend");

        // Model cards are capped independently of endpoints.
        assertThat(h.put(cardKey("dynamo", "backend", "generate", 7), model("dynamo", "backend", "generate", 7,
                "{\"display_name\":\"m\"}"))).isTrue();

        // Once a key is deleted, a new one fits again.
        h.delete(endpointKey("dynamo", "decode", "generate", 1));
        assertThat(h.put(endpointKey("dynamo", "decode", "generate", 16_385),
                endpoint("dynamo", "decode", "generate", 16_385))).isTrue();
        assertThat(h.workers()).hasSize(16_384);
    }

    @Test
    void aResyncAtCapacityKeepsHeldKeysBeforeNewOnes() {
        ReducerHarness h = new ReducerHarness(new DiscoveryLimits(4096, 1024, 3));
        h.resync(endpointKey("dynamo", "d", "generate", 1), endpoint("dynamo", "d", "generate", 1),
                endpointKey("dynamo", "d", "generate", 2), endpoint("dynamo", "d", "generate", 2));
        // The resync lists two new keys first; only one fits, and the held ones are never displaced.
        h.resync(endpointKey("dynamo", "d", "generate", 8), endpoint("dynamo", "d", "generate", 8),
                endpointKey("dynamo", "d", "generate", 9), endpoint("dynamo", "d", "generate", 9),
                endpointKey("dynamo", "d", "generate", 1), endpoint("dynamo", "d", "generate", 1),
                endpointKey("dynamo", "d", "generate", 2), endpoint("dynamo", "d", "generate", 2));
        assertThat(h.workers()).extracting(w -> w.instanceId()).containsExactly(1L, 2L, 8L);
        assertThat(h.count(DiscoveryEventKind.REFUSED)).isEqualTo(1);
    }
}
