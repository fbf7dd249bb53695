package dev.continuum.router.discovery.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Incremental feeding and reference counting, without a server. */
@Timeout(10)
class MetadataFleetTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final String SHARED = "namespace/dynamo/topic/kv_metrics/99";
    private final List<DiscoveryEventKind> counted = new ArrayList<>();
    private final MetadataFleet fleet = new MetadataFleet(List.of("dynamo"), MetadataLimits.defaults(), counted::add,
            new MetadataFleet.Memory());

    private static Map<String, Object> spec(String pod, String channelEndpoint, String extraCardField)
            throws Exception {
        long id = PodNameHash.hashPodName(pod);
        String hex = Long.toHexString(id);
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("endpoints", Map.of("dynamo/decode/generate/" + hex, MAPPER.readValue(
                "{\"type\":\"Endpoint\",\"component\":\"decode\",\"endpoint\":\"generate\",\"instance_id\":" + id + "}",
                Map.class)));
        data.put("model_cards", Map.of("dynamo/decode/generate/" + hex, MAPPER.readValue(
                "{\"type\":\"Model\",\"component\":\"decode\",\"endpoint\":\"generate\",\"instance_id\":" + id
                        + ",\"card_json\":{\"display_name\":\"m\",\"extra\":\"" + extraCardField + "\"}}", Map.class)));
        data.put("event_channels", Map.of(SHARED, MAPPER.readValue("{\"type\":\"EventChannel\",\"scope\":{\"kind\":"
                + "\"namespace\"},\"topic\":\"kv_metrics\",\"instance_id\":153,\"transport\":{\"kind\":\"Zmq\","
                + "\"config\":{\"endpoint\":\"" + channelEndpoint + "\"}}}", Map.class)));
        data.put("event_sources", null);
        return Map.of("data", data);
    }

    private static List<String> keys(List<DiscoveryEvent> events) {
        return events.stream().map(e -> (e instanceof DiscoveryEvent.Put p ? "put " + p.key()
                : "delete " + ((DiscoveryEvent.Delete) e).key())).toList();
    }

    private static String value(List<DiscoveryEvent> events, int i) {
        return new String(((DiscoveryEvent.Put) events.get(i)).value(), StandardCharsets.UTF_8);
    }

    @Test
    void aSharedChannelKeyStaysUntilItsLastContributorLeavesAndIsRePutWithTheSurvivorsValue() throws Exception {
        fleet.putSlice("s", Set.of("a-0", "b-0"));
        assertThat(fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "x"), "a-0")).hasSize(3);
        List<DiscoveryEvent> second = fleet.putResource("b-0", "u2", spec("b-0", "tcp://10.0.0.2:1", "x"), "b-0");
        // The shared key keeps its first contributor's value: only b's own two records are new.
        assertThat(keys(second)).hasSize(2).noneMatch(k -> k.contains("event_channels"));

        List<DiscoveryEvent> aLeaves = fleet.deleteResource("a-0");
        assertThat(keys(aLeaves)).contains("put v1/event_channels/" + SHARED);
        assertThat(aLeaves.stream().filter(e -> e instanceof DiscoveryEvent.Put).map(e -> new String(
                ((DiscoveryEvent.Put) e).value(), StandardCharsets.UTF_8))).anyMatch(v -> v.contains("10.0.0.2"));
        List<DiscoveryEvent> bNotReady = fleet.putSlice("s", Set.of());
        assertThat(keys(bNotReady)).contains("delete v1/event_channels/" + SHARED).hasSize(3);
        assertThat(fleet.records()).isEmpty();
    }

    @Test
    void anUpdateReFeedsOnlyTheRecordsThatChanged() throws Exception {
        fleet.putSlice("s", Set.of("a-0"));
        fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "x"), "a-0");
        List<DiscoveryEvent> update = fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "y"), "a-0");
        assertThat(keys(update)).containsExactly("put v1/mdc/dynamo/decode/generate/"
                + Long.toHexString(PodNameHash.hashPodName("a-0")));
        assertThat(fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "y"), "a-0")).isEmpty();
    }

    @Test
    void aMalformedSpecFromAnotherObjectWithTheSameNameKeepsNothing() throws Exception {
        fleet.putSlice("s", Set.of("a-0"));
        fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "x"), "a-0");
        assertThat(fleet.putResource("a-0", "u1", "garbage", "a-0")).isEmpty();
        assertThat(fleet.records()).hasSize(3);
        assertThat(keys(fleet.putResource("a-0", "u2", Map.of("data", List.of()), "a-0"))).hasSize(3)
                .allMatch(k -> k.startsWith("delete"));
        assertThat(counted).containsExactly(DiscoveryEventKind.MALFORMED);
    }

    @Test
    void anOversizedCardIsTrimmedToItsTypedFields() throws Exception {
        fleet.putSlice("s", Set.of("a-0"));
        List<DiscoveryEvent> events = fleet.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1",
                "z".repeat(MetadataLimits.MAX_CARD_BYTES + 1)), "a-0");
        String card = events.stream().filter(e -> ((DiscoveryEvent.Put) e).key().startsWith("v1/mdc/"))
                .map(e -> new String(((DiscoveryEvent.Put) e).value(), StandardCharsets.UTF_8)).findFirst().orElseThrow();
        assertThat(card).contains("\"card_json\":{\"display_name\":\"m\"}").hasSizeLessThan(1000);
    }

    @Test
    void recordsOfOtherDynamoNamespacesAreNotHeld() throws Exception {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("endpoints", Map.of("other/decode/generate/1", Map.of("instance_id", 1)));
        fleet.putSlice("s", Set.of("a-0"));
        assertThat(fleet.putResource("a-0", "u1", Map.of("data", data), "a-0")).isEmpty();
        assertThat(fleet.heldBytes()).isZero();
    }

    @Test
    void endpointSlicesBeyondTheCapAreIgnoredAndCountedOnceWhileHeldOnesStillUpdate() throws Exception {
        MetadataFleet capped = new MetadataFleet(List.of("dynamo"), new MetadataLimits(32, 500, 16, 2,
                MetadataLimits.MAX_HELD_RECORD_BYTES, 1 << 20), counted::add, new MetadataFleet.Memory());
        capped.putResource("a-0", "u1", spec("a-0", "tcp://10.0.0.1:1", "x"), "a-0");
        capped.putSlice("s1", Set.of());
        capped.putSlice("s2", Set.of());

        assertThat(capped.putSlice("s3", Set.of("a-0"))).isEmpty();
        assertThat(capped.putSlice("s3", Set.of("a-0"))).isEmpty();
        assertThat(counted).containsExactly(DiscoveryEventKind.MALFORMED);

        // A held slice still updates: its ready target now feeds the resource's records.
        assertThat(capped.putSlice("s2", Set.of("a-0"))).hasSize(3);
        // Once a slot frees, a new slice is accepted.
        capped.deleteSlice("s1");
        assertThat(capped.putSlice("s3", Set.of())).isEmpty();
        assertThat(counted).hasSize(1);
    }
}
