package dev.continuum.router.discovery.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.Keyspace;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Coverage-guided fuzzing of the DynamoWorkerMetadata classifier (docs/testing.md, "Fuzzing"): resource puts
 * with fuzzed JSON specs (parsed the way the API client hands them over: plain maps, lists and scalars),
 * owners, deletes, and EndpointSlice readiness changes, under small bounds so the caps are reached.
 *
 * <p>The contract checked: no operation throws; the events the fleet emits, replayed in order, always give
 * exactly its {@code records()} snapshot (the reducer never drifts from the resources held); every emitted
 * key is under a watched prefix; and the held bytes and resources stay within their bounds.
 */
class MetadataFleetFuzzTarget {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final MetadataLimits LIMITS = new MetadataLimits(32, 500, 3, 2, 2048, 128);
    private static final List<String> PREFIXES = Keyspace.prefixes(List.of("dynamo"));
    private static final String[] NAMES = {"w-0", "w-1", "w-2", "w-3"};

    @FuzzTest(maxDuration = "10s")
    void emittedEventsAlwaysReplayToTheHeldRecords(FuzzedDataProvider data) {
        MetadataFleet fleet = new MetadataFleet(List.of("dynamo"), LIMITS, kind -> { }, new MetadataFleet.Memory());
        Map<String, byte[]> replayed = new HashMap<>();
        int steps = data.consumeInt(1, 16);
        for (int i = 0; i < steps && data.remainingBytes() > 0; i++) {
            String name = data.pickValue(NAMES);
            List<DiscoveryEvent> events = switch (data.consumeInt(0, 5)) {
                case 0 -> fleet.deleteResource(name);
                case 1 -> fleet.putSlice(data.pickValue(new String[] {"s1", "s2", "s3"}), readyNames(data));
                case 2 -> fleet.deleteSlice(data.pickValue(new String[] {"s1", "s2", "s3"}));
                default -> fleet.putResource(name, data.pickValue(new String[] {"u1", "u2"}), spec(data, name),
                        data.consumeBoolean() ? name : data.pickValue(NAMES));
            };
            for (DiscoveryEvent event : events) {
                if (event instanceof DiscoveryEvent.Put put) {
                    assertThat(PREFIXES).anyMatch(put.key()::startsWith);
                    replayed.put(put.key(), put.value());
                } else if (event instanceof DiscoveryEvent.Delete delete) {
                    assertThat(replayed.remove(delete.key())).as("delete of a key never put: %s", delete.key())
                            .isNotNull();
                }
            }
            Map<String, byte[]> snapshot = new HashMap<>();
            fleet.records().forEach(p -> snapshot.put(p.key(), p.value()));
            assertThat(replayed.keySet()).isEqualTo(snapshot.keySet());
            snapshot.forEach((k, v) -> assertThat(Arrays.equals(v, replayed.get(k))).as(k).isTrue());
            assertThat(fleet.heldBytes()).isBetween(0L, LIMITS.maxRecordBytes());
            assertThat(fleet.resources()).isLessThanOrEqualTo(LIMITS.maxResources());
        }
    }

    private static Set<String> readyNames(FuzzedDataProvider data) {
        Set<String> names = new HashSet<>();
        for (String name : NAMES) {
            if (data.consumeBoolean()) {
                names.add(name);
            }
        }
        return names;
    }

    /** A well-formed spec for the Pod (its own ID in keys and values), one with fuzzed parts, or fuzzed JSON. */
    private static Object spec(FuzzedDataProvider data, String name) {
        long id = data.consumeBoolean() ? PodNameHash.hashPodName(name) : data.consumeLong();
        String hex = Long.toHexString(id);
        String decimal = Long.toUnsignedString(id);
        String json = switch (data.consumeInt(0, 3)) {
            case 0, 1 -> """
                    {"data":{"endpoints":{"dynamo/decode/generate/%s":{"type":"Endpoint","component":"decode",\
                    "endpoint":"generate","instance_id":%s}},"model_cards":{"%s/decode/generate/%s":{"type":"Model",\
                    "instance_id":%s,"card_json":{"display_name":"%s","extra":"%s"}}},"event_channels":{"%s":\
                    {"type":"EventChannel","instance_id":9}}}}""".formatted(hex, decimal,
                    data.pickValue(new String[] {"dynamo", "other"}), hex, decimal, data.consumeString(8),
                    "x".repeat(data.consumeInt(0, 300)), "namespace/dynamo/topic/kv_metrics/" + data.consumeInt(0, 3));
            case 2 -> "{\"data\":" + data.consumeString(200) + "}";
            default -> data.consumeString(300);
        };
        try {
            return MAPPER.readValue(json, Object.class);
        } catch (JsonProcessingException e) {
            return json; // not JSON at all: the fleet sees a non-object spec
        }
    }
}
