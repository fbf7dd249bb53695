package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.testing.LogCapture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

@Timeout(30)
class EventChannelTest {
    private static final long PUBLISHER = 2046539;

    @Test
    void theSeedsChannelRecordBecomesAKvMetricsPublisher() {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/event_channels/namespace/dynamo/component/decode/endpoint/generate/topic/kv_metrics/1f3a4b", """
                {
                  "type": "EventChannel",
                  "scope": {
                    "kind": "endpoint",
                    "endpoint": { "namespace": "dynamo", "component": "decode", "name": "generate" }
                  },
                  "topic": "kv_metrics",
                  "instance_id": 2046539,
                  "transport": { "kind": "Zmq", "config": { "endpoint": "tcp://10.0.0.7:41000" } }
                }""");
        DynamoPublisher publisher = h.publisher("dynamo", PUBLISHER).orElseThrow();
        assertThat(publisher.topic()).isEqualTo(PublisherTopic.KV_METRICS);
        assertThat(publisher.component()).isEqualTo("decode");
        assertThat(publisher.endpoint()).isEqualTo("generate");
        assertThat(publisher.address()).isEqualTo("tcp://10.0.0.7:41000");
        assertThat(publisher.toString()).doesNotContain("10.0.0.7");
        assertThat(h.workers()).as("a channel is not a worker").isEmpty();
    }

    static Stream<Arguments> shapes() {
        String zmq = "\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://10.0.0.7:41000\"}}";
        return Stream.of(
                Arguments.of("component scope", "{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"component\","
                        + "\"namespace\":\"dynamo\",\"component\":\"backend\"},\"topic\":\"kv-events\",\"instance_id\":7," + zmq + "}",
                        "backend", null, PublisherTopic.KV_EVENTS),
                Arguments.of("namespace scope", "{\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},"
                        + "\"topic\":\"kv_metrics\",\"instance_id\":7," + zmq + "}", null, null, PublisherTopic.KV_METRICS),
                Arguments.of("older flat shape", "{\"type\":\"EventChannel\",\"namespace\":\"dynamo\",\"component\":\"backend\","
                        + "\"topic\":\"kv-events\",\"instance_id\":7," + zmq + "}", "backend", null, PublisherTopic.KV_EVENTS),
                Arguments.of("older flat shape, namespace-scoped", "{\"namespace\":\"dynamo\",\"component\":\"\","
                        + "\"topic\":\"kv_metrics\",\"instance_id\":7," + zmq + "}", null, null, PublisherTopic.KV_METRICS),
                Arguments.of("hex string publisher id", "{\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},"
                        + "\"topic\":\"kv_metrics\",\"instance_id\":\"7\"," + zmq + "}", null, null, PublisherTopic.KV_METRICS),
                Arguments.of("IPv6 endpoint", "{\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},\"topic\":\"kv_metrics\","
                        + "\"instance_id\":7,\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://[fd00::7]:41000\"}}}",
                        null, null, PublisherTopic.KV_METRICS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("shapes")
    void bothChannelRecordShapesAreAccepted(String description, String json, String component, String endpoint,
                                            PublisherTopic topic) {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/event_channels/namespace/dynamo/topic/" + topic.wireName() + "/7", json);
        DynamoPublisher publisher = h.publisher("dynamo", 7).orElseThrow();
        assertThat(publisher.component()).isEqualTo(component);
        assertThat(publisher.endpoint()).isEqualTo(endpoint);
        assertThat(publisher.topic()).isEqualTo(topic);
    }

    @Test
    void keySegmentsArePercentDecodedOnceAndFillWhatThePayloadLeavesOut() {
        ReducerHarness h = new ReducerHarness("ns.one");
        String key = "v1/event_channels/namespace/ns%2Eone/component/vllm%2Eworker/endpoint/gen%25x/topic/kv_metrics/7";
        assertThat(key).isEqualTo(channelKey("ns.one", "vllm.worker", "gen%x", "kv_metrics", 7));
        h.put(key, "{\"instance_id\":7,\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://h:1\"}}}");
        DynamoPublisher publisher = h.publisher("ns.one", 7).orElseThrow();
        assertThat(publisher.component()).isEqualTo("vllm.worker");
        assertThat(publisher.endpoint()).isEqualTo("gen%x");
        assertThat(publisher.topic()).isEqualTo(PublisherTopic.KV_METRICS);
    }

    @Test
    void lowercaseEscapesInTheNamespaceSegmentMatchToo() {
        ReducerHarness h = new ReducerHarness("ns.one");
        h.put("v1/event_channels/namespace/ns%2eone/topic/kv_metrics/7",
                channel("ns.one", "c", "generate", "kv_metrics", 7, "tcp://h:1"));
        assertThat(h.publisher("ns.one", 7)).isPresent();
    }

    static Stream<Arguments> unsubscribable() {
        return Stream.of(
                Arguments.of("NATS without a subject prefix", "{\"kind\":\"Nats\",\"config\":{}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("NATS wildcard prefix", "{\"kind\":\"Nats\",\"config\":{\"subject_prefix\":\"namespace.*\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("NATS full wildcard", "{\"kind\":\"Nats\",\"config\":{\"subject_prefix\":\">\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("NATS empty token", "{\"kind\":\"Nats\",\"config\":{\"subject_prefix\":\"namespace..dynamo\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("NATS whitespace", "{\"kind\":\"Nats\",\"config\":{\"subject_prefix\":\"namespace. dynamo\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("NATS trailing dot", "{\"kind\":\"Nats\",\"config\":{\"subject_prefix\":\"namespace.dynamo.\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("ZmqBroker transport", "{\"kind\":\"ZmqBroker\",\"config\":{\"xsub_endpoints\":[\"tcp://b:1\"]}}",
                        DiscoveryEventKind.UNSUPPORTED),
                Arguments.of("unknown transport kind", "{\"kind\":\"Quic\",\"config\":{}}", DiscoveryEventKind.UNSUPPORTED),
                Arguments.of("ipc:// endpoint", "{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"ipc:///tmp/kv.sock\"}}",
                        DiscoveryEventKind.UNSUPPORTED),
                Arguments.of("missing endpoint", "{\"kind\":\"Zmq\",\"config\":{}}", DiscoveryEventKind.MALFORMED),
                Arguments.of("wildcard host", "{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://*:41000\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("port 0", "{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://10.0.0.7:0\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("port 70000", "{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://10.0.0.7:70000\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("no port", "{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://10.0.0.7\"}}",
                        DiscoveryEventKind.MALFORMED),
                Arguments.of("transport as a string", "\"zmq\"", DiscoveryEventKind.MALFORMED));
    }

    @ParameterizedTest(name = "{0} is skipped, logged once per key and counted as {2}")
    @MethodSource("unsubscribable")
    void channelsTheRouterCannotDialAreSkippedLoggedOnceAndCounted(String description, String transport,
                                                                   DiscoveryEventKind kind) {
        ReducerHarness h = new ReducerHarness();
        String key = channelKey("dynamo", "decode", "generate", "kv_metrics", PUBLISHER);
        String json = "{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},"
                + "\"topic\":\"kv_metrics\",\"instance_id\":2046539,\"transport\":" + transport + "}";
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(key, json);
            h.put(key, json);
            h.resync(key, json);
            assertThat(logs.warnings()).singleElement().asString().contains(key);
        }
        assertThat(h.view().publishers()).isEmpty();
        assertThat(h.count(kind)).isEqualTo(1);
    }

    @Test
    void aChannelWithoutAnIdIsMalformed() {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/event_channels/namespace/dynamo/topic/kv_metrics/7",
                "{\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},\"topic\":\"kv_metrics\","
                        + "\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://h:1\"}}}");
        assertThat(h.count(DiscoveryEventKind.MALFORMED)).isEqualTo(1);
        assertThat(h.view().publishers()).isEmpty();
    }

    @Test
    void anUnknownScopeKindIsUnsupported() {
        ReducerHarness h = new ReducerHarness();
        h.put("v1/event_channels/namespace/dynamo/topic/kv_metrics/7",
                "{\"scope\":{\"kind\":\"galaxy\"},\"topic\":\"kv_metrics\",\"instance_id\":7,"
                        + "\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":\"tcp://h:1\"}}}");
        assertThat(h.count(DiscoveryEventKind.UNSUPPORTED)).isEqualTo(1);
        assertThat(h.view().publishers()).isEmpty();
    }

    @Test
    void unrecognizedTopicsAndEventSourcesAreSkippedSilently() {
        ReducerHarness h = new ReducerHarness();
        try (LogCapture logs = LogCapture.of(EtcdRecordReducer.class)) {
            h.put(channelKey("dynamo", "decode", "generate", "active_sequences_events", 9),
                    channel("dynamo", "decode", "generate", "active_sequences_events", 9, "tcp://10.0.0.7:41000"));
            h.put("v1/event_channels/namespace/dynamo/topic/kv_metrics/a",
                    "{\"type\":\"EventSource\",\"topic\":\"kv_metrics\",\"publisher_id\":10,\"metadata\":{}}");
            assertThat(logs.warnings()).isEmpty();
        }
        assertThat(h.view().publishers()).isEmpty();
        assertThat(h.counts).containsOnlyKeys(DiscoveryEventKind.PUT);
    }

    @Test
    void aChannelThatBecomesDialableIsPublishedAndLoggedAgainIfItRegresses() {
        ReducerHarness h = new ReducerHarness();
        String key = channelKey("dynamo", "decode", "generate", "kv-events", 11);
        String broker = "{\"scope\":{\"kind\":\"namespace\",\"name\":\"dynamo\"},\"topic\":\"kv-events\",\"instance_id\":11,"
                + "\"transport\":{\"kind\":\"ZmqBroker\",\"config\":{}}}";
        h.put(key, broker);
        h.put(key, channel("dynamo", "decode", "generate", "kv-events", 11, "tcp://10.0.0.7:41001"));
        assertThat(h.publisher("dynamo", 11)).isPresent();
        h.put(key, broker);
        assertThat(h.publisher("dynamo", 11)).isEmpty();
        assertThat(h.count(DiscoveryEventKind.UNSUPPORTED)).isEqualTo(2);
    }

    @Test
    void aNatsChannelIsAPublisherAtItsSubjectPrefix() {
        ReducerHarness h = new ReducerHarness();
        String key = channelKey("dynamo", "backend", "generate", "kv-events", 12);
        h.put(key, "{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"component\",\"namespace\":\"dynamo\","
                + "\"component\":\"backend\"},\"topic\":\"kv-events\",\"instance_id\":12,\"transport\":{\"kind\":\"Nats\","
                + "\"config\":{\"subject_prefix\":\"namespace.dynamo.component.backend\"}}}");
        DynamoPublisher publisher = h.publisher("dynamo", 12).orElseThrow();
        assertThat(publisher.isNats()).isTrue();
        assertThat(publisher.natsSubjectPrefix()).isEqualTo("namespace.dynamo.component.backend");
        assertThat(publisher.component()).isEqualTo("backend");
        assertThat(publisher.topic()).isEqualTo(PublisherTopic.KV_EVENTS);
        assertThat(h.count(DiscoveryEventKind.UNSUPPORTED)).isZero();
    }
}
