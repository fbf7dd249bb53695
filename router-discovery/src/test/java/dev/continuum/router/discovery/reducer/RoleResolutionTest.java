package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(30)
class RoleResolutionTest {
    private static final long ID = 0x1a7f2bL;

    /**
     * component, card (worker_type / model_type JSON fragment, or "none" for no card), expected role or
     * "excluded".
     */
    @ParameterizedTest(name = "component {0} with card [{1}] -> {2}")
    @CsvSource(delimiter = ';', value = {
            // No card yet: the component decides, any other component is aggregated.
            "prefill ; none ; prefill",
            "decode ; none ; decode",
            "backend ; none ; aggregated",
            "VllmWorker ; none ; aggregated",
            // Component and card agree.
            "prefill ; \"worker_type\":\"Prefill\" ; prefill",
            "decode ; \"worker_type\":\"decode\" ; decode",
            "Decode ; \"worker_type\":\"DECODE\" ; decode",
            // Component and card disagree: excluded.
            "prefill ; \"worker_type\":\"Decode\" ; excluded",
            "decode ; \"worker_type\":\"Prefill\" ; excluded",
            "decode ; \"worker_type\":\"Aggregated\" ; excluded",
            "decode ; \"model_type\":\"Chat | Prefill\" ; excluded",
            // Other components let the card decide.
            "backend ; \"worker_type\":\"Prefill\" ; prefill",
            "backend ; \"worker_type\":\"decode\" ; decode",
            "backend ; \"worker_type\":\"aggregated\" ; aggregated",
            "backend ; \"model_type\":\"Prefill\" ; prefill",
            "backend ; \"model_type\":16 ; prefill",
            "backend ; \"model_type\":[\"Chat\",\"Prefill\"] ; prefill",
            "backend ; \"model_type\":\"Chat | Completions\" ; aggregated",
            // An unrecognized worker_type is no claim: beside a prefill/decode component the component decides.
            "prefill ; \"worker_type\":\"Encode\" ; prefill",
            "decode ; \"worker_type\":\"speculative\" ; decode",
            "backend ; \"worker_type\":\"Encode\" ; unknown",
            "backend ; \"worker_type\":\"Encode\",\"model_type\":\"Prefill\" ; prefill",
            // A worker_type of the wrong type is dropped like an absent one.
            "backend ; \"worker_type\":7 ; aggregated",
            "backend ; \"worker_type\":\"\" ; aggregated",
            // No claim anywhere.
            "backend ; \"display_name\":\"m\" ; aggregated"})
    void rolesComeFromTheComponentAndTheCard(String component, String cardFields, String expected) {
        ReducerHarness h = new ReducerHarness();
        h.put(endpointKey("dynamo", component, "generate", ID), endpoint("dynamo", component, "generate", ID));
        if (!cardFields.equals("none")) {
            h.put(cardKey("dynamo", component, "generate", ID),
                    model("dynamo", component, "generate", ID, "{" + cardFields + "}"));
        }
        if (expected.equals("excluded")) {
            assertThat(h.workers()).isEmpty();
            assertThat(h.count(DiscoveryEventKind.EXCLUDED)).isEqualTo(1);
        } else {
            assertThat(h.workers()).singleElement()
                    .satisfies(w -> assertThat(w.role().wireName()).isEqualTo(expected));
        }
    }

    @Test
    void aDisagreementIsLoggedOnceWithBothRolesAndClearsWhenTheCardIsFixed() {
        ReducerHarness h = new ReducerHarness();
        String cardKey = cardKey("dynamo", "prefill", "generate", ID);
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(endpointKey("dynamo", "prefill", "generate", ID), endpoint("dynamo", "prefill", "generate", ID));
            h.put(cardKey, model("dynamo", "prefill", "generate", ID, "{\"worker_type\":\"Decode\"}"));
            h.resync(endpointKey("dynamo", "prefill", "generate", ID), endpoint("dynamo", "prefill", "generate", ID),
                    cardKey, model("dynamo", "prefill", "generate", ID, "{\"worker_type\":\"Decode\"}"));
            assertThat(logs.warnings()).singleElement().asString()
                    .contains("1a7f2b").contains("prefill").contains("decode");
        }
        h.put(cardKey, model("dynamo", "prefill", "generate", ID, "{\"worker_type\":\"Prefill\"}"));
        assertThat(h.workers()).singleElement().satisfies(w -> assertThat(w.role().wireName()).isEqualTo("prefill"));
    }
}
