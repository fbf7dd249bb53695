package dev.continuum.router.app;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.channel;
import static dev.continuum.router.testing.DynamoRecords.channelKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.kubernetes.PodNameHash;
import dev.continuum.router.testing.DynamoEventWire;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One Dynamo decode worker Pod of the event-bus end-to-end tests: JeroMQ PUB sockets for its kv_metrics channel
 * and, optionally, its kv-events channel (messages in upstream's layout, {@link DynamoEventWire}), and the
 * DynamoWorkerMetadata that advertises them, written to a fabric8 mock server in CRUD mode.
 */
final class WorkerPod {
    static final String DYNAMO_NAMESPACE = "dynamo";
    static final ResourceDefinitionContext METADATA = new ResourceDefinitionContext.Builder()
            .withGroup("nvidia.com").withVersion("v1alpha1").withKind("DynamoWorkerMetadata")
            .withPlural("dynamoworkermetadatas").withNamespaced(true).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    final String pod;
    final long instanceId;
    final long publisherId;
    final ZMQ.Socket socket;
    final int port;
    long sequence = 1;
    /** The kv-events channel's publisher ID and PUB socket (null without kv-events). */
    final long kvPublisherId;
    final ZMQ.@Nullable Socket kvSocket;
    final int kvPort;
    long kvSequence = 1;

    WorkerPod(ZContext zmq, String pod, boolean kvEvents) {
        this.pod = pod;
        this.instanceId = PodNameHash.hashPodName(pod);
        this.publisherId = instanceId ^ 0x5a5a;
        socket = bind(zmq);
        port = port(socket);
        kvPublisherId = instanceId ^ 0xa5a5;
        kvSocket = kvEvents ? bind(zmq) : null;
        kvPort = kvSocket == null ? 0 : port(kvSocket);
    }

    private static ZMQ.Socket bind(ZContext zmq) {
        ZMQ.Socket s = zmq.createSocket(SocketType.PUB);
        s.setLinger(0);
        s.bind("tcp://127.0.0.1:*");
        return s;
    }

    private static int port(ZMQ.Socket bound) {
        String endpoint = bound.getLastEndpoint();
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    WorkerId worker() {
        return new WorkerId(DYNAMO_NAMESPACE, instanceId);
    }

    /** One kv_metrics message with {@code kvUsed} blocks in use, claiming {@code claimedId} at {@code seq}. */
    void publish(long claimedId, long seq, long kvUsed) {
        send(socket, "kv_metrics", claimedId, seq, DynamoEventWire.activeLoad(instanceId, 0, null, kvUsed));
    }

    /** One kv-events message around a msgpack RouterEvent (or batch), claiming {@code claimedId}. */
    void publishKv(long claimedId, byte[] routerEvent) {
        ZMQ.Socket kv = kvSocket;
        if (kv == null) {
            throw new IllegalStateException(pod + " has no kv-events channel");
        }
        send(kv, "kv-events", claimedId, kvSequence++, routerEvent);
    }

    private static void send(ZMQ.Socket to, String topic, long claimedId, long seq, byte[] payload) {
        to.send(topic.getBytes(StandardCharsets.US_ASCII), ZMQ.SNDMORE);
        to.send(DynamoEventWire.u64(claimedId), ZMQ.SNDMORE);
        to.send(DynamoEventWire.u64(seq), ZMQ.SNDMORE);
        to.send(DynamoEventWire.frame(DynamoEventWire.envelope(claimedId, seq, topic, payload)), 0);
    }

    /** Writes the Pod's DynamoWorkerMetadata (owned by the Pod) into {@code k8sNamespace}. */
    void createMetadata(KubernetesClient admin, String k8sNamespace, String modelName) throws IOException {
        String ns = DYNAMO_NAMESPACE;
        Map<String, Object> endpoints = new LinkedHashMap<>();
        Map<String, Object> cards = new LinkedHashMap<>();
        Map<String, Object> channels = new LinkedHashMap<>();
        endpoints.put(endpointKey(ns, "decode", "generate", instanceId).substring("v1/instances/".length()),
                JSON.readValue(endpoint(ns, "decode", "generate", instanceId), Map.class));
        cards.put(cardKey(ns, "decode", "generate", instanceId).substring("v1/mdc/".length()),
                JSON.readValue(model(ns, "decode", "generate", instanceId, card(modelName, "Decode")), Map.class));
        channels.put(channelKey(ns, "decode", "generate", "kv_metrics", publisherId)
                        .substring("v1/event_channels/".length()),
                JSON.readValue(channel(ns, "decode", "generate", "kv_metrics", publisherId,
                        "tcp://127.0.0.1:" + port), Map.class));
        if (kvSocket != null) {
            channels.put(channelKey(ns, "decode", "generate", "kv-events", kvPublisherId)
                            .substring("v1/event_channels/".length()),
                    JSON.readValue(channel(ns, "decode", "generate", "kv-events", kvPublisherId,
                            "tcp://127.0.0.1:" + kvPort), Map.class));
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("endpoints", endpoints);
        data.put("model_cards", cards);
        data.put("event_channels", channels);
        data.put("event_sources", null);
        GenericKubernetesResource resource = new GenericKubernetesResourceBuilder().withApiVersion("nvidia.com/v1alpha1")
                .withKind("DynamoWorkerMetadata")
                .withNewMetadata().withName(pod).withNamespace(k8sNamespace)
                .addNewOwnerReference().withApiVersion("v1").withKind("Pod").withName(pod).withUid("uid-" + pod)
                .withController(true).endOwnerReference().endMetadata()
                .withAdditionalProperties(Map.of("spec", Map.of("data", data))).build();
        admin.genericKubernetesResources(METADATA).inNamespace(k8sNamespace).resource(resource).create();
    }
}
