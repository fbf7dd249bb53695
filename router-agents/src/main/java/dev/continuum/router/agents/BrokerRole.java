package dev.continuum.router.agents;

import dev.continuum.router.eventbus.Hello;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/** The event broker: declares Dynamo namespaces and relays only the ZMQ publishers its discovery advertises. */
public final class BrokerRole implements AgentRole {
    private final List<String> namespaces;
    private final AdvertisedTargets advertised;

    public BrokerRole(List<String> namespaces, AdvertisedTargets advertised) {
        this.namespaces = List.copyOf(namespaces);
        this.advertised = advertised;
    }

    @Override
    public void describe(ObjectNode hello) {
        hello.put("role", "broker");
        ArrayNode declared = hello.putArray("dynamo_namespaces");
        namespaces.forEach(declared::add);
    }

    @Override
    public Choice choose(JsonNode target) {
        String kind = Hello.text(target.get("kind"));
        String namespace = Hello.text(target.get("namespace"));
        String host = Hello.text(target.get("host"));
        int port = target.path("port").asInt(0);
        if (!"zmq_tcp".equals(kind) || namespace == null || host == null || port < 1 || port > 65535) {
            return new Refusal("invalid_target", "a broker relays zmq_tcp targets only");
        }
        if (!advertised.advertises(namespace, host, port)) {
            return new Refusal("target_not_advertised", "no DynamoWorkerMetadata of this namespace advertises it");
        }
        return new Upstream(host, port, channel -> List.of());
    }
}
