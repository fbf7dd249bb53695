package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerRole;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(30)
class JoinRulesTest {
    private static final long ID = 7465265302745285L;

    @Test
    void theSeedsModelRecordJoinsItsGenerateRecord() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "prefill", "generate", ID), endpoint("dynamo", "prefill", "generate", ID));
        String seedModel = """
                {
                  "type": "Model",
                  "namespace": "dynamo",
                  "component": "prefill",
                  "endpoint": "generate",
                  "instance_id": 7465265302745285,
                  "card_json": {
                    "display_name": "Qwen/Qwen3-32B",
                    "worker_type": "Prefill",
                    "kv_cache_block_size": 64,
                    "runtime_config": {
                      "total_kv_blocks": 12000,
                      "max_num_batched_tokens": 8192,
                      "max_num_seqs": 256,
                      "context_length": 32768,
                      "data_parallel_start_rank": 0,
                      "data_parallel_size": 1,
                      "disaggregated_endpoint": "dynamo/decode/generate"
                    }
                  }
                }""";
        h.put(cardKey("dynamo", "prefill", "generate", ID), seedModel);

        DynamoWorker worker = h.worker(ID).orElseThrow();
        assertThat(worker.role()).isEqualTo(WorkerRole.PREFILL);
        assertThat(worker.model()).isEqualTo("Qwen/Qwen3-32B");
        assertThat(worker.card().kvCacheBlockSize()).isEqualTo(64);
        assertThat(worker.capacity().totalKvBlocks()).isEqualTo(12000L);
        assertThat(worker.capacity().maxNumBatchedTokens()).isEqualTo(8192L);
        assertThat(worker.capacity().maxNumSeqs()).isEqualTo(256L);
        assertThat(worker.capacity().contextLength()).isEqualTo(32768L);
        assertThat(worker.card().dataParallelStartRank()).isZero();
        assertThat(worker.card().dataParallelSize()).isEqualTo(1);
        assertThat(worker.card().disaggregatedEndpoint().path()).isEqualTo("dynamo/decode/generate");
        assertThat(worker.card().rawCard()).startsWith("{\n    \"display_name\": \"Qwen/Qwen3-32B\"")
                .endsWith("}\n  }");
    }

    @ParameterizedTest(name = "card registered for component {0}, endpoint {1} joins: {2}")
    @CsvSource({
            "decode, generate, true",
            "decode, load_metrics, false",
            "prefill, generate, false",
            "'', '', true"})
    void aCardJoinsOnComponentEndpointAndInstanceId(String component, String endpointName, boolean joins) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put("v1/mdc/dynamo/" + component + "/" + endpointName + "/1a859e868630c5",
                model("dynamo", component, endpointName, ID, card("Qwen/Qwen3-32B", "Decode")));
        assertThat(h.worker(ID).orElseThrow().card() != null).isEqualTo(joins);
    }

    @Test
    void decimalAndHexInstanceIdsJoinTheSameWorker() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put(cardKey("dynamo", "decode", "generate", ID), """
                {"type":"Model","component":"decode","endpoint":"generate","instance_id":"1a859e868630c5",
                 "card_json":{"display_name":"Qwen/Qwen3-32B"}}""");
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("Qwen/Qwen3-32B");
    }

    @Test
    void aLegacyCardJoinsOnInstanceIdAloneAndAScopedCardTakesPrecedence() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        String legacyKey = "v1/mdc/dynamo/legacy/1a859e868630c5";
        h.put(legacyKey, """
                {"type":"Model","component":"","endpoint":"","instance_id":7465265302745285,
                 "card_json":{"display_name":"legacy-model"}}""");
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("legacy-model");

        String scopedKey = cardKey("dynamo", "decode", "generate", ID);
        h.put(scopedKey, model("dynamo", "decode", "generate", ID, "{\"display_name\":\"scoped-model\"}"));
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("scoped-model");

        h.delete(scopedKey);
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("legacy-model");
    }

    @Test
    void aLegacyCardWithoutComponentOrEndpointFieldsJoinsToo() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put("v1/mdc/dynamo/x", "{\"type\":\"Model\",\"instance_id\":7465265302745285,\"card_json\":{\"name\":\"n\"}}");
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("n");
    }

    @ParameterizedTest(name = "model_suffix {0}")
    @CsvSource({"my-lora", "adapter/v2"})
    void aLoraCardWithAModelSuffixNeverJoins(String suffix) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put(cardKey("dynamo", "decode", "generate", ID) + "/" + suffix, """
                {"type":"Model","component":"decode","endpoint":"generate","instance_id":7465265302745285,
                 "model_suffix":"%s","card_json":{"display_name":"lora","lora":{"name":"%s"}}}""".formatted(suffix, suffix));
        assertThat(h.worker(ID).orElseThrow().card()).isNull();
    }

    @Test
    void anEmptyModelSuffixIsABaseCard() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put(cardKey("dynamo", "decode", "generate", ID), """
                {"type":"Model","component":"decode","endpoint":"generate","instance_id":7465265302745285,
                 "model_suffix":"","card_json":{"display_name":"base"}}""");
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("base");
    }

    @Test
    void aCardThatArrivesBeforeItsEndpointJoinsWhenTheEndpointArrives() {
        ReducerHarness h = new ReducerHarness();
        assertThat(h.put(cardKey("dynamo", "decode", "generate", ID),
                model("dynamo", "decode", "generate", ID, card("Qwen/Qwen3-32B", "Decode")))).isFalse();
        assertThat(h.workers()).isEmpty();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        assertThat(h.worker(ID).orElseThrow().model()).isEqualTo("Qwen/Qwen3-32B");
    }

    @Test
    void aCardChangeUpdatesLastUpdatedAndKeepsFirstSeen() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        DynamoWorker before = h.worker(ID).orElseThrow();
        h.clock.advance(Duration.ofSeconds(42));
        assertThat(h.put(cardKey("dynamo", "decode", "generate", ID),
                model("dynamo", "decode", "generate", ID, card("Qwen/Qwen3-32B", "Decode")))).isTrue();
        DynamoWorker after = h.worker(ID).orElseThrow();
        assertThat(after.firstSeen()).isEqualTo(before.firstSeen());
        assertThat(after.lastUpdated()).isEqualTo(before.lastUpdated().plusSeconds(42));

        h.clock.advance(Duration.ofSeconds(1));
        assertThat(h.delete(cardKey("dynamo", "decode", "generate", ID))).isTrue();
        assertThat(h.worker(ID).orElseThrow().card()).isNull();
    }
}
