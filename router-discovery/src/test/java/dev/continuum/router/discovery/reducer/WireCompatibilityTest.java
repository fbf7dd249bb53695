package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.LogCapture;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(30)
class WireCompatibilityTest {
    private static final long ID = 1736491;

    private static ModelCard cardOf(String cardJson) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "backend", "generate", ID), endpoint("dynamo", "backend", "generate", ID));
        h.put(cardKey("dynamo", "backend", "generate", ID), model("dynamo", "backend", "generate", ID, cardJson));
        return h.worker(ID).orElseThrow().card();
    }

    @Test
    void everyFieldIsOptional() {
        ModelCard card = cardOf("{}");
        assertThat(card.model()).isNull();
        assertThat(card.capacity()).isEqualTo(ModelCard.WorkerCapacity.UNKNOWN);
        assertThat(card.kvCacheBlockSize()).isNull();
        assertThat(card.dataParallelSize()).isNull();
        assertThat(card.artifacts()).isEqualTo(ModelCard.CardArtifacts.NONE);
        assertThat(card.rawCard()).isEqualTo("{}");

        ReducerHarness h = new ReducerHarness();
        h.put("v1/instances/dynamo/x", "{\"instance_id\":5,\"endpoint\":\"generate\"}");
        assertThat(h.worker(5)).get().satisfies(w -> assertThat(w.component()).isEmpty());
    }

    @Test
    void unknownFieldsAreIgnoredAtEveryLevel() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), """
                {"type":"Endpoint","component":"decode","endpoint":"generate","instance_id":1736491,
                 "future_field":{"nested":[1,2,{"x":null}]},"transport":{"quic":"x"},"device_type":"tpu"}""");
        h.put(cardKey("dynamo", "decode", "generate", ID), """
                {"type":"Model","component":"decode","endpoint":"generate","instance_id":1736491,"new_top":true,
                 "card_json":{"display_name":"m","taints":["gpu"],"runtime_config":{"total_kv_blocks":5,
                 "topology_domains":{"rack":"r1"}}}}""");
        DynamoWorker worker = h.worker(ID).orElseThrow();
        assertThat(worker.model()).isEqualTo("m");
        assertThat(worker.capacity().totalKvBlocks()).isEqualTo(5L);
    }

    static Stream<Arguments> wrongTypedFields() {
        return Stream.of(
                Arguments.of("display_name as a number falls back to name",
                        "\"display_name\":5,\"name\":\"fallback\"", field(ModelCard::model, "fallback")),
                Arguments.of("kv_cache_block_size as a string", "\"kv_cache_block_size\":\"64\"",
                        field(ModelCard::kvCacheBlockSize, null)),
                Arguments.of("kv_cache_block_size of zero", "\"kv_cache_block_size\":0",
                        field(ModelCard::kvCacheBlockSize, null)),
                Arguments.of("kv_cache_block_size above u32", "\"kv_cache_block_size\":4294967296",
                        field(ModelCard::kvCacheBlockSize, null)),
                Arguments.of("total_kv_blocks negative", "\"runtime_config\":{\"total_kv_blocks\":-1,\"max_num_seqs\":8}",
                        field(c -> c.capacity().totalKvBlocks(), null)),
                Arguments.of("total_kv_blocks fractional", "\"runtime_config\":{\"total_kv_blocks\":1.5}",
                        field(c -> c.capacity().totalKvBlocks(), null)),
                Arguments.of("runtime_config as a list", "\"runtime_config\":[1],\"kv_cache_block_size\":16",
                        field(ModelCard::kvCacheBlockSize, 16)),
                Arguments.of("data_parallel_size of zero", "\"runtime_config\":{\"data_parallel_size\":0}",
                        field(ModelCard::dataParallelSize, null)),
                Arguments.of("data_parallel_start_rank negative", "\"runtime_config\":{\"data_parallel_start_rank\":-2}",
                        field(ModelCard::dataParallelStartRank, null)),
                Arguments.of("context_length at the top level", "\"context_length\":4096",
                        field(c -> c.capacity().contextLength(), 4096L)),
                Arguments.of("context_length inside runtime_config", "\"runtime_config\":{\"context_length\":8192}",
                        field(c -> c.capacity().contextLength(), 8192L)),
                Arguments.of("top-level context_length wins", "\"context_length\":4096,\"runtime_config\":{\"context_length\":8192}",
                        field(c -> c.capacity().contextLength(), 4096L)),
                Arguments.of("disaggregated_endpoint as an object",
                        "\"runtime_config\":{\"disaggregated_endpoint\":{\"bootstrap_host\":\"10.0.0.9\",\"bootstrap_port\":8998}}",
                        field(ModelCard::disaggregatedEndpoint, new ModelCard.DisaggregatedEndpoint(null, "10.0.0.9", 8998))),
                Arguments.of("disaggregated_endpoint as a number", "\"runtime_config\":{\"disaggregated_endpoint\":7}",
                        field(ModelCard::disaggregatedEndpoint, null)),
                Arguments.of("worker_type as an object", "\"worker_type\":{\"x\":1},\"display_name\":\"kept\"",
                        field(ModelCard::model, "kept")),
                Arguments.of("tokenizer with a non-blake3 checksum",
                        "\"tokenizer\":{\"hf_tokenizer_json\":{\"path\":\"/t.json\",\"checksum\":\"sha256:00\"}}",
                        field(c -> c.artifacts().tokenizer(), new ModelCard.ArtifactFile("hf_tokenizer_json", "/t.json", null, false))),
                Arguments.of("tokenizer with its size (a negative one reads as unknown)",
                        "\"tokenizer\":{\"hf_tokenizer_json\":{\"path\":\"/t.json\",\"size\":11422654}},"
                                + "\"prompt_formatter\":{\"hf_tokenizer_config_json\":{\"path\":\"/c.json\",\"size\":-1}}",
                        field(c -> List.of(c.artifacts().tokenizer(), c.artifacts().promptFormatter()), List.of(
                                new ModelCard.ArtifactFile("hf_tokenizer_json", "/t.json", null, false, 11_422_654L),
                                new ModelCard.ArtifactFile("hf_tokenizer_config_json", "/c.json", null, false)))),
                Arguments.of("tokenizer without a path", "\"tokenizer\":{\"hf_tokenizer_json\":{\"checksum\":\"blake3:00\"}}",
                        field(c -> c.artifacts().tokenizer(), null)),
                Arguments.of("a custom chat template in prompt_formatter",
                        "\"prompt_formatter\":{\"hf_chat_template_jinja\":{\"is_custom\":true,\"file\":{\"path\":\"https://h/t.jinja\"}}}",
                        field(c -> c.artifacts().promptFormatter(),
                                new ModelCard.ArtifactFile("hf_chat_template_jinja", "https://h/t.jinja", null, true))),
                Arguments.of("tik_token tokenizer", "\"tokenizer\":{\"tik_token_model\":{\"path\":\"/m.tiktoken\",\"checksum\":"
                                + "\"blake3:AF1349B9F5F9A1A6A0404DEA36DCC9499BCB25C9ADC112B7CC9A93CAE41F3262\"}}",
                        field(c -> c.artifacts().tokenizer(), new ModelCard.ArtifactFile("tik_token_model", "/m.tiktoken",
                                "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262", false))));
    }

    private record Expectation(Function<ModelCard, Object> getter, Object expected) {
    }

    private static Expectation field(Function<ModelCard, Object> getter, Object expected) {
        return new Expectation(getter, expected);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wrongTypedFields")
    void aFieldOfTheWrongTypeDropsThatFieldOnly(String description, String fields, Expectation expectation) {
        ModelCard card = cardOf("{" + fields + ",\"runtime_config_probe\":1,\"display_name_probe\":2}");
        assertThat(expectation.getter().apply(card)).as(description).isEqualTo(expectation.expected());
    }

    @Test
    void aWrongTypedFieldNeverDropsTheCardsOtherTypedFields() {
        ModelCard card = cardOf("""
                {"display_name":"Qwen/Qwen3-32B","kv_cache_block_size":"sixty-four",
                 "runtime_config":{"total_kv_blocks":"many","max_num_batched_tokens":8192,"max_num_seqs":null}}""");
        assertThat(card.model()).isEqualTo("Qwen/Qwen3-32B");
        assertThat(card.kvCacheBlockSize()).isNull();
        assertThat(card.capacity().totalKvBlocks()).isNull();
        assertThat(card.capacity().maxNumBatchedTokens()).isEqualTo(8192L);
    }

    @Test
    void aCardThatIsNotAnObjectKeepsTheWorkerAndTheRawCardVerbatim() {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
        h.put(cardKey("dynamo", "decode", "generate", ID),
                model("dynamo", "decode", "generate", ID, "[ \"a future card shape\" , 42 ]"));
        DynamoWorker worker = h.worker(ID).orElseThrow();
        assertThat(worker.role().wireName()).isEqualTo("decode");
        assertThat(worker.card().model()).isNull();
        assertThat(worker.card().rawCard()).isEqualTo("[ \"a future card shape\" , 42 ]");
    }

    @Test
    void aCardNestedAsAJsonStringIsReadFromItsContent() {
        ModelCard card = cardOf("\"{\\\"display_name\\\":\\\"inner\\\",\\\"kv_cache_block_size\\\":32}\"");
        assertThat(card.model()).isEqualTo("inner");
        assertThat(card.kvCacheBlockSize()).isEqualTo(32);
        assertThat(card.rawCard()).isEqualTo("{\"display_name\":\"inner\",\"kv_cache_block_size\":32}");
    }

    @Test
    void theSeedCardKeepsItsArtifactsForTheKvIssue() {
        ModelCard card = cardOf(DynamoRecords.card("Qwen/Qwen3-32B", "Decode"));
        assertThat(card.artifacts().tokenizer().blake3Hex())
                .isEqualTo("af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
        assertThat(card.artifacts().chatTemplateFile().kind()).isEqualTo("hf_chat_template");
        assertThat(card.artifacts().chatTemplateFile().path()).isEqualTo("/models/qwen/chat.jinja");
    }

    @Test
    void aReleaseStringIsLoggedOncePerInstanceAtDebug() {
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            ReducerHarness h = new ReducerHarness();
            h.put(endpointKey("dynamo", "decode", "generate", ID), endpoint("dynamo", "decode", "generate", ID));
            h.put(cardKey("dynamo", "decode", "generate", ID),
                    model("dynamo", "decode", "generate", ID, "{\"dynamo_version\":\"1.5.0\",\"display_name\":\"a\"}"));
            h.put(cardKey("dynamo", "decode", "generate", ID),
                    model("dynamo", "decode", "generate", ID, "{\"dynamo_version\":\"1.5.0\",\"display_name\":\"b\"}"));
            assertThat(logs.messages(ch.qos.logback.classic.Level.DEBUG))
                    .filteredOn(line -> line.contains("1.5.0")).singleElement().asString().contains("1a7f2b");
        }
    }

    @Test
    void aReleaseFieldIsReadFromAnyOfItsSpellings() {
        assertThat(cardOf("{\"runtime_version\":\"0.9\"}").release()).isEqualTo("0.9");
        assertThat(cardOf("{\"version\":\"1.4.2\"}").release()).isEqualTo("1.4.2");
        assertThat(cardOf("{\"release\":\"r7\"}").release()).isEqualTo("r7");
    }
}
