package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DuplicateIdentitiesTest {
    private static final long ID = 0x1a7f2bL;

    @Test
    void twoGenerateRecordsClaimingOneInstanceProduceNoWorker() {
        ReducerHarness h = new ReducerHarness();
        String genuine = endpointKey("dynamo", "decode", "generate", ID);
        String forged = endpointKey("dynamo", "prefill", "generate", ID);
        h.put(genuine, endpoint("dynamo", "decode", "generate", ID));
        assertThat(h.worker(ID)).isPresent();

        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            assertThat(h.put(forged, endpoint("dynamo", "prefill", "generate", ID))).isTrue();
            assertThat(h.workers()).isEmpty();
            assertThat(logs.warnings()).singleElement().asString()
                    .contains("generate instance").contains("dynamo/1a7f2b").contains("2 records")
                    .contains(genuine).contains(forged);
        }
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isEqualTo(1);

        // When the extra record goes away the survivor is used again.
        assertThat(h.delete(forged)).isTrue();
        assertThat(h.worker(ID).orElseThrow().component()).isEqualTo("decode");
    }

    @Test
    void hexAndDecimalIdsOnTwoKeysAreOneIdentityAndConflict() {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/instances/dynamo/decode/generate/1a7f2b", endpoint("dynamo", "decode", "generate", ID));
        h.put("v1/instances/dynamo/decode/generate/1A7F2B",
                "{\"type\":\"Endpoint\",\"component\":\"decode\",\"endpoint\":\"generate\",\"instance_id\":\"1a7f2b\"}");
        assertThat(h.workers()).isEmpty();
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isEqualTo(1);
    }

    @Test
    void eachDistinctConflictingKeySetIsLoggedOnceUpToFourKeys() {
        ReducerHarness h = new ReducerHarness();
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            for (int i = 0; i < 6; i++) {
                h.put("v1/instances/dynamo/c" + i + "/generate/1a7f2b", endpoint("dynamo", "c" + i, "generate", ID));
            }
            // An unchanged resync of the same conflict logs nothing new.
            String[] all = new String[12];
            for (int i = 0; i < 6; i++) {
                all[2 * i] = "v1/instances/dynamo/c" + i + "/generate/1a7f2b";
                all[2 * i + 1] = endpoint("dynamo", "c" + i, "generate", ID);
            }
            h.resync(all);
            // Sets of 2, 3, 4, 5 and 6 keys: five distinct sets.
            assertThat(logs.warnings()).hasSize(5);
            assertThat(logs.warnings().get(4)).contains("6 records").contains("c0").contains("c3")
                    .doesNotContain("c4/").endsWith("and 2 more");
        }
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isEqualTo(5);
        assertThat(h.workers()).isEmpty();
    }

    @Test
    void refusedBaseCardsLeaveTheWorkerMaterializedWithoutACard() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put("v1/mdc/dynamo/decode/generate/1a7f2b", model("dynamo", "decode", "generate", ID, card("a", "Decode")));
        h.put("v1/mdc/dynamo/decode/generate/0x1a7f2b", model("dynamo", "decode", "generate", ID, card("b", "Decode")));
        // A legacy card is no fallback for a refused scoped set: the worker has no card at all.
        h.put("v1/mdc/dynamo/legacy", "{\"instance_id\":1736491,\"card_json\":{\"display_name\":\"legacy\"}}");

        assertThat(h.worker(ID)).get().satisfies(w -> {
            assertThat(w.card()).isNull();
            assertThat(w.role().wireName()).isEqualTo("decode");
        });
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isEqualTo(1);
    }

    @Test
    void duplicatePublisherIdsAreBothRefused() {
        ReducerHarness h = new ReducerHarness();
        String first = channelKey("dynamo", "decode", "generate", "kv_metrics", 2046539);
        String second = channelKey("dynamo", "prefill", "generate", "kv_metrics", 2046539);
        h.put(first, channel("dynamo", "decode", "generate", "kv_metrics", 2046539, "tcp://10.0.0.7:41000"));
        assertThat(h.publisher("dynamo", 2046539)).isPresent();
        h.put(second, channel("dynamo", "prefill", "generate", "kv_metrics", 2046539, "tcp://10.0.0.8:41000"));
        assertThat(h.view().publishers()).isEmpty();
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isEqualTo(1);
        h.delete(second);
        assertThat(h.publisher("dynamo", 2046539)).get().satisfies(p -> assertThat(p.component()).isEqualTo("decode"));
    }

    @Test
    void theSameInstanceIdInTwoNamespacesIsTwoWorkers() {
        ReducerHarness h = new ReducerHarness("prod", "canary");
        h.put(endpointKey("prod", "decode", "generate", ID), endpoint("prod", "decode", "generate", ID));
        h.put(endpointKey("canary", "decode", "generate", ID), endpoint("canary", "decode", "generate", ID));
        assertThat(h.workers()).extracting(w -> w.namespace()).containsExactly("canary", "prod");
        assertThat(h.count(DiscoveryEventKind.DUPLICATE)).isZero();
    }
}
