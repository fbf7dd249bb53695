package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.testing.LogCapture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(30)
class WhatBecomesAWorkerTest {
    private static final long ID = 7465265302745285L;

    @ParameterizedTest(name = "endpoint {0} materializes a worker: {1}")
    @CsvSource({
            "generate, true",
            "load_metrics, false",
            "clear_kv_blocks, false",
            "Generate, false",
            "'', false"})
    void onlyGenerateEndpointsMaterializeWorkers(String endpointName, boolean materializes) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", endpointName.isEmpty() ? "x" : endpointName, ID),
                endpoint("dynamo", "decode", endpointName, ID));
        assertThat(h.worker(ID).isPresent()).isEqualTo(materializes);
        assertThat(h.workers()).hasSize(materializes ? 1 : 0);
        assertThat(h.count(DiscoveryEventKind.MALFORMED)).isZero();
    }

    @Test
    void theSeedsEndpointRecordBecomesAPrefillWorkerWithoutACard() {
        ReducerHarness h = new ReducerHarness();
        String seedRecord = """
                {
                  "type": "Endpoint",
                  "namespace": "dynamo",
                  "component": "prefill",
                  "endpoint": "generate",
                  "instance_id": 7465265302745285,
                  "transport": { "tcp": "10.0.0.4:31000/1a7f2b/dynamo/prefill/generate" },
                  "device_type": "cuda",
                  "request_plane_codec": "msgpack"
                }""";
        assertThat(h.put("v1/instances/dynamo/prefill/generate/1a859e868630c5", seedRecord)).isTrue();

        DynamoWorker worker = h.worker(ID).orElseThrow();
        assertThat(worker.role()).isEqualTo(WorkerRole.PREFILL);
        assertThat(worker.component()).isEqualTo("prefill");
        assertThat(worker.endpoint()).isEqualTo("generate");
        assertThat(worker.card()).isNull();
        assertThat(worker.id().hex()).isEqualTo("1a859e868630c5");
        assertThat(worker.id().decimal()).isEqualTo("7465265302745285");
        assertThat(worker.firstSeen()).isEqualTo(h.clock.instant());
    }

    static Stream<Arguments> badValues() {
        return Stream.of(
                Arguments.of("not JSON", "generate me"),
                Arguments.of("a JSON array", "[1,2,3]"),
                Arguments.of("a JSON string", "\"Endpoint\""),
                Arguments.of("truncated JSON", "{\"type\":\"Endpoint\",\"instance_id\":1"),
                Arguments.of("trailing content", "{\"type\":\"Endpoint\",\"endpoint\":\"generate\",\"instance_id\":1} {}"),
                Arguments.of("no instance_id", "{\"type\":\"Endpoint\",\"component\":\"decode\",\"endpoint\":\"generate\"}"),
                Arguments.of("null instance_id", "{\"type\":\"Endpoint\",\"endpoint\":\"generate\",\"instance_id\":null}"),
                Arguments.of("negative instance_id", "{\"endpoint\":\"generate\",\"instance_id\":-1}"),
                Arguments.of("instance_id of 2^64", "{\"endpoint\":\"generate\",\"instance_id\":18446744073709551616}"),
                Arguments.of("fractional instance_id", "{\"endpoint\":\"generate\",\"instance_id\":1.5}"),
                Arguments.of("exponent instance_id", "{\"endpoint\":\"generate\",\"instance_id\":1e3}"),
                Arguments.of("boolean instance_id", "{\"endpoint\":\"generate\",\"instance_id\":true}"),
                Arguments.of("non-hex string instance_id", "{\"endpoint\":\"generate\",\"instance_id\":\"zz\"}"),
                Arguments.of("17-digit hex instance_id", "{\"endpoint\":\"generate\",\"instance_id\":\"1ffffffffffffffff\"}"),
                Arguments.of("empty string instance_id", "{\"endpoint\":\"generate\",\"instance_id\":\"\"}"),
                Arguments.of("a Model record under v1/instances", "{\"type\":\"Model\",\"endpoint\":\"generate\",\"instance_id\":5}"),
                Arguments.of("JSON nested 5000 deep", "{\"endpoint\":\"generate\",\"instance_id\":2,\"x\":"
                        + "[".repeat(5000) + "]".repeat(5000) + "}"));
    }

    @ParameterizedTest(name = "{0} drops that record only, logged and counted once")
    @MethodSource("badValues")
    void aParseFailureSkipsOneRecordNeverTheFleet(String description, String value) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", "decode", "generate", 1), endpoint("dynamo", "decode", "generate", 1));
        String badKey = endpointKey("dynamo", "decode", "generate", 2);
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(badKey, value);
            h.put(badKey, value);
            assertThat(logs.warnings()).as(description).hasSize(1).allMatch(line -> line.contains(badKey));
        }
        h.put(endpointKey("dynamo", "decode", "generate", 3), endpoint("dynamo", "decode", "generate", 3));

        assertThat(h.workers()).extracting(w -> w.instanceId()).containsExactly(1L, 3L);
        assertThat(h.count(DiscoveryEventKind.MALFORMED)).isEqualTo(1);
    }

    @Test
    void aValidValueReplacingAMalformedOneIsUsedAndABadValueReplacingAGoodOneDropsIt() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", 9);
        h.put(key, endpoint("dynamo", "decode", "generate", 9));
        assertThat(h.put(key, "{oops")).isTrue();
        assertThat(h.workers()).isEmpty();
        assertThat(h.put(key, endpoint("dynamo", "decode", "generate", 9))).isTrue();
        assertThat(h.worker(9)).isPresent();
    }

    static Stream<Arguments> instanceIdSpellings() {
        return Stream.of(
                Arguments.of("7465265302745285", 7465265302745285L),
                Arguments.of("\"1a859e868630c5\"", 7465265302745285L),
                Arguments.of("\"1A859E868630C5\"", 7465265302745285L),
                Arguments.of("\"0x1a859e868630c5\"", 7465265302745285L),
                Arguments.of("0", 0L),
                Arguments.of("18446744073709551615", -1L),
                Arguments.of("\"ffffffffffffffff\"", -1L),
                Arguments.of("9223372036854775808", Long.MIN_VALUE));
    }

    @ParameterizedTest(name = "instance_id {0}")
    @MethodSource("instanceIdSpellings")
    void instanceIdsAreUnsigned64BitNumbersOrHexStrings(String spelling, long expected) {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/instances/dynamo/backend/generate/x",
                "{\"type\":\"Endpoint\",\"component\":\"backend\",\"endpoint\":\"generate\",\"instance_id\":" + spelling + "}");
        assertThat(h.workers()).singleElement().satisfies(w -> assertThat(w.instanceId()).isEqualTo(expected));
    }

    @Test
    void theLargestInstanceIdPrintsAsUnsignedHexAndDecimal() {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/instances/dynamo/backend/generate/ffffffffffffffff",
                "{\"component\":\"backend\",\"endpoint\":\"generate\",\"instance_id\":18446744073709551615}");
        DynamoWorker worker = h.workers().get(0);
        assertThat(worker.id().hex()).isEqualTo("ffffffffffffffff");
        assertThat(worker.id().decimal()).isEqualTo("18446744073709551615");
    }

    @Test
    void theNamespaceComesFromTheWatchedPrefixNeverFromThePayload() {
        ReducerHarness h = new ReducerHarness("prod", "canary");
        h.put(endpointKey("canary", "decode", "generate", 5), endpoint("prod", "decode", "generate", 5));
        assertThat(h.worker("canary", 5)).isPresent();
        assertThat(h.worker("prod", 5)).isEmpty();
    }

    @Test
    void keysOutsideTheWatchedNamespacesAreIgnored() {
        ReducerHarness h = new ReducerHarness("prod");
        assertThat(h.put(endpointKey("other", "decode", "generate", 5), endpoint("other", "decode", "generate", 5)))
                .isFalse();
        assertThat(h.put("v1/instances/prodx/decode/generate/5", endpoint("prod", "decode", "generate", 5))).isFalse();
        assertThat(h.put("v1/instances/prod", endpoint("prod", "decode", "generate", 5))).isFalse();
        assertThat(h.workers()).isEmpty();
    }

    @Test
    void aDeleteRemovesTheWorkerAsALeaseExpiryWould() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", 5);
        h.put(key, endpoint("dynamo", "decode", "generate", 5));
        assertThat(h.delete(key)).isTrue();
        assertThat(h.workers()).isEmpty();
        assertThat(h.delete(key)).as("deleting an absent key changes nothing").isFalse();
        assertThat(h.count(DiscoveryEventKind.DELETE)).as("only the delete of a held record counts").isEqualTo(1);
        assertThat(h.count(DiscoveryEventKind.PUT)).isEqualTo(1);
    }

    @Test
    void anUnchangedPutChangesNothingAndKeepsLastUpdated() {
        ReducerHarness h = new ReducerHarness();
        String key = endpointKey("dynamo", "decode", "generate", 5);
        h.put(key, endpoint("dynamo", "decode", "generate", 5));
        var before = h.view();
        h.clock.advance(java.time.Duration.ofMinutes(3));
        assertThat(h.put(key, endpoint("dynamo", "decode", "generate", 5))).isFalse();
        assertThat(h.view()).isSameAs(before);
    }
}
