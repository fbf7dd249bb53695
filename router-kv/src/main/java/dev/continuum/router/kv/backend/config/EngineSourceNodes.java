package dev.continuum.router.kv.backend.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.eventplane.zmtp.ZmtpEndpoint;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/** Binds the keys of a {@code transport: zmq} source, and refuses them on the other transports. */
final class EngineSourceNodes {
    private static final String[] KEYS = {"endpoint", "replay_endpoint", "topic"};

    private EngineSourceNodes() {
    }

    static KvCacheIndexConfig.@Nullable Source source(String backend, ConfigNode entry, ConfigNode urlNode,
                                                      ConfigNode tlsNode) {
        if (urlNode.isPresent()) {
            urlNode.error("set (expected: none for transport zmq; name the PUB socket in endpoint)");
            return null;
        }
        if (tlsNode.isPresent()) {
            // The engines' publishers speak plain ZMTP with the NULL mechanism: nothing to verify.
            tlsNode.error("set (expected: none for transport zmq; the engines' ZMQ sockets have no TLS)");
            return null;
        }
        ConfigNode endpointNode = entry.get("endpoint");
        if (!endpointNode.isPresent()) {
            endpointNode.error("missing (expected: the engine's PUB socket, tcp://host:port)");
            return null;
        }
        ZmtpEndpoint endpoint = endpoint(endpointNode);
        ConfigNode replayNode = entry.get("replay_endpoint");
        ZmtpEndpoint replay = replayNode.isPresent() ? endpoint(replayNode) : null;
        ConfigNode topicNode = entry.get("topic");
        String topic = topicNode.asString("");
        if (topic.getBytes(StandardCharsets.UTF_8).length > KvCacheIndexConfig.Zmq.MAX_TOPIC_BYTES) {
            topicNode.error(topic.length() + " characters (expected: at most "
                    + KvCacheIndexConfig.Zmq.MAX_TOPIC_BYTES + " bytes)");
            return null;
        }
        if (endpoint == null || (replayNode.isPresent() && replay == null)) {
            return null;
        }
        return KvCacheIndexConfig.Source.zmq(backend, new KvCacheIndexConfig.Zmq(endpointNode.asString(""),
                replay == null ? null : replayNode.asString(""), topic));
    }

    /** False (an error reported) when a zmq-only key is set on another transport. */
    static boolean absent(ConfigNode entry, String transport) {
        for (String key : KEYS) {
            ConfigNode node = entry.get(key);
            if (node.isPresent()) {
                node.error("set (expected: none for transport " + Problems.render(transport) + "; only for zmq)");
                return false;
            }
        }
        return true;
    }

    private static @Nullable ZmtpEndpoint endpoint(ConfigNode node) {
        String text = node.asStringOrNull();
        ZmtpEndpoint parsed = text == null ? null : ZmtpEndpoint.parse(text).orElse(null);
        if (parsed == null) {
            node.error((text == null ? "not a string" : Problems.render(text))
                    + " (expected: tcp://host:port with port 1..65535)");
        }
        return parsed;
    }
}
