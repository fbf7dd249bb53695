package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.LogCapture;
import org.junit.jupiter.api.Test;

/** A key or value written to etcd cannot add lines to the router's log or reorder what an operator reads. */
class LogForgingTest {
    private static final String FORGED = "v1/instances/dynamo/decode/generate/1\n2026-12-01 00:00:00 INFO forged\u202e";

    @Test
    void aMalformedRecordUnderAForgedKeyLogsOneEscapedLine() {
        ReducerHarness h = new ReducerHarness();
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(FORGED, "{not json");
            assertThat(logs.warnings()).singleElement().satisfies(line -> assertThat(line)
                    .doesNotContain("\n").doesNotContain("\u202e")
                    .contains("generate/1\\n2026-12-01 00:00:00 INFO forged\\u202e"));
        }
    }

    @Test
    void theCapacityWarningEscapesTheRefusedKey() {
        ReducerHarness h = new ReducerHarness(new DiscoveryLimits(4096, 1024, 1));
        h.put("v1/instances/dynamo/decode/generate/2", endpoint("dynamo", "decode", "generate", 2));
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(FORGED, endpoint("dynamo", "decode", "generate", 1));
            assertThat(logs.warnings()).singleElement().satisfies(line -> assertThat(line).doesNotContain("\n")
                    .contains("forged\\u202e"));
        }
    }
}
