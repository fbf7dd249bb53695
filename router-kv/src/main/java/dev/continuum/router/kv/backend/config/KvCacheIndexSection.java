package dev.continuum.router.kv.backend.config;

import dev.continuum.router.eventbus.config.BackendStreamNodes;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.BusRole;
import dev.continuum.router.eventbus.config.EventBusConfig;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Binds, validates and cross-checks {@code dynamo.kv_cache_index} (docs/configuration.md):
 *
 * <pre>
 * dynamo:
 *   kv_cache_index:
 *     sources:
 *       - backend: vllm-1                  # a backends[].name
 *         transport: direct                # the router dials url itself
 *         url: http://vllm-1:8000/kv/events
 *       - backend: vllm-3
 *         url: https://vllm-3.example.com/kv/events
 *         tls: {ca_cert: /etc/continuum/backend-ca.pem}   # optional: else the JDK's trust store
 *       - backend: vllm-2
 *         transport: event_bus             # a kv_listener entry granted vllm-2 relays it
 *       - backend: vllm-4
 *         transport: zmq                   # the engine's own --kv-events-config publisher
 *         endpoint: tcp://vllm-4:5557
 *         replay_endpoint: tcp://vllm-4:5558   # optional
 *         topic: ""                        # optional: the publisher's topic
 *     max_blocks_per_backend: 262144
 *     max_event_bytes: 64KiB
 *     selection:                           # the index steers backends[] selection for these models
 *       enabled: true
 *       models:
 *         - model: Qwen/Qwen3-0.6B
 *           tokenizer: {path: /models/qwen3/tokenizer.json, blake3: "blake3:..."}        # pinned in dynamo.kv
 *           tokenizer_config: {path: /models/qwen3/tokenizer_config.json, blake3: "blake3:..."}  # optional
 *           block_size: 16                 # the engines' --block-size
 * </pre>
 *
 * Besides errors, it warns about the three ways the bus sources and the kv_listener grants can disagree.
 */
public final class KvCacheIndexSection implements DynamoSection<KvCacheIndexConfig> {
    @Override
    public String key() {
        return "kv_cache_index";
    }

    @Override
    public Class<KvCacheIndexConfig> type() {
        return KvCacheIndexConfig.class;
    }

    @Override
    public KvCacheIndexConfig defaults() {
        return KvCacheIndexConfig.DEFAULTS;
    }

    @Override
    public @Nullable KvCacheIndexConfig bind(ConfigNode node, Problems problems) {
        KvCacheIndexConfig d = KvCacheIndexConfig.DEFAULTS;
        int maxBlocks = node.get("max_blocks_per_backend").asInt(d.maxBlocksPerBackend(), 1, 16_777_216);
        ConfigNode eventNode = node.get("max_event_bytes");
        long eventBytes = eventNode.asByteSize(new dev.continuum.router.core.config.ByteSize(d.maxEventBytes()))
                .bytes();
        if (eventBytes < 1024 || eventBytes > 1_048_576) {
            eventNode.error(eventBytes + " bytes (expected: 1KiB..1MiB)");
        }
        ConfigNode sourcesNode = node.get("sources");
        List<ConfigNode> entries = sourcesNode.elements();
        if (entries.size() > KvCacheIndexConfig.MAX_SOURCES) {
            sourcesNode.error(entries.size() + " entries (expected: at most " + KvCacheIndexConfig.MAX_SOURCES + ")");
            return null;
        }
        List<KvCacheIndexConfig.Source> sources = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (ConfigNode entry : entries) {
            KvCacheIndexConfig.Source source = source(entry, seen);
            if (source != null) {
                sources.add(source);
            }
        }
        BackendSelectionConfig selection = SelectionNodes.bind(node.get("selection"));
        if (problems.hasErrors()) {
            return null;
        }
        return new KvCacheIndexConfig(sources, maxBlocks, (int) eventBytes, selection);
    }

    private static KvCacheIndexConfig.@Nullable Source source(ConfigNode entry, Set<String> seen) {
        ConfigNode backendNode = entry.get("backend");
        String backend = backendNode.asStringOrNull();
        if (backend == null || backend.isEmpty() || backend.length() > 128) {
            backendNode.error((backend == null ? "missing" : Problems.render(backend))
                    + " (expected: a backends[].name, 1..128 characters)");
            return null;
        }
        if (!seen.add(backend)) {
            backendNode.error(Problems.render(backend) + " (expected: one source per backend)");
            return null;
        }
        ConfigNode transportNode = entry.get("transport");
        String transportText = transportNode.asString("direct");
        KvCacheIndexConfig.Transport transport = switch (transportText) {
            case "direct" -> KvCacheIndexConfig.Transport.DIRECT;
            case "event_bus" -> KvCacheIndexConfig.Transport.EVENT_BUS;
            case "zmq" -> KvCacheIndexConfig.Transport.ZMQ;
            default -> null;
        };
        if (transport == null) {
            transportNode.invalid("direct, event_bus or zmq");
            return null;
        }
        ConfigNode urlNode = entry.get("url");
        ConfigNode tlsNode = entry.get("tls");
        if (transport == KvCacheIndexConfig.Transport.ZMQ) {
            return EngineSourceNodes.source(backend, entry, urlNode, tlsNode);
        }
        if (!EngineSourceNodes.absent(entry, transportText)) {
            return null;
        }
        if (transport == KvCacheIndexConfig.Transport.EVENT_BUS) {
            if (urlNode.isPresent()) {
                urlNode.error("set (expected: none for transport event_bus; the kv-listener's file names the URL)");
                return null;
            }
            if (tlsNode.isPresent()) {
                tlsNode.error("set (expected: none for transport event_bus; the kv-listener's file has its TLS)");
                return null;
            }
            return new KvCacheIndexConfig.Source(backend, transport, null);
        }
        URI url = BackendStreamNodes.url(urlNode);
        if (url == null) {
            return null;
        }
        BackendStreamNodes.Tls tls = BackendStreamNodes.tls(tlsNode, url, "ca_cert"); // as etcd.tls.ca_cert
        if (!tls.valid()) {
            return null;
        }
        return new KvCacheIndexConfig.Source(backend, transport, url,
                tls.present() ? new KvCacheIndexConfig.Tls(tls.trust()) : null);
    }

    @Override
    public void crossCheck(KvCacheIndexConfig value, RouterConfig config, Problems problems) {
        Set<String> backends = new HashSet<>();
        for (BackendConfig b : config.backends()) {
            backends.add(b.name());
        }
        EventBusConfig bus = config.dynamo().find(EventBusConfig.class).orElse(EventBusConfig.DEFAULTS);
        Set<String> granted = new HashSet<>();
        for (BrokerEntry entry : bus.brokers()) {
            if (entry.role() == BusRole.KV_LISTENER) {
                granted.addAll(entry.backends());
            }
        }
        Set<String> busSources = new HashSet<>();
        List<KvCacheIndexConfig.Source> sources = value.sources();
        SelectionChecks.run(value, config, problems);
        for (int i = 0; i < sources.size(); i++) {
            KvCacheIndexConfig.Source s = sources.get(i);
            String path = "dynamo.kv_cache_index.sources[" + i + "]";
            if (!backends.contains(s.backend())) {
                problems.error(path + ".backend", Problems.render(s.backend())
                        + " (expected: the name of a backends[] entry)");
            }
            if (s.transport() != KvCacheIndexConfig.Transport.EVENT_BUS) {
                continue;
            }
            busSources.add(s.backend());
            if (!config.dynamo().enabled() || !bus.enabled()) {
                problems.warning(path + ".transport", "event_bus while dynamo.event_bus.enabled is false"
                        + " (or dynamo.enabled is): no kv-listener can connect, so this source stays pending");
            } else if (!granted.contains(s.backend())) {
                problems.warning(path + ".backend", Problems.render(s.backend())
                        + " is granted by no kv_listener entry of dynamo.event_bus.brokers: it stays pending");
            }
        }
        List<BrokerEntry> entries = bus.brokers();
        for (int i = 0; i < entries.size(); i++) {
            BrokerEntry entry = entries.get(i);
            if (entry.role() != BusRole.KV_LISTENER) {
                continue;
            }
            for (int j = 0; j < entry.backends().size(); j++) {
                if (!busSources.contains(entry.backends().get(j))) {
                    problems.warning("dynamo.event_bus.brokers[" + i + "].backends[" + j + "]",
                            Problems.render(entry.backends().get(j)) + " has no dynamo.kv_cache_index source with "
                                    + "transport event_bus: the router never subscribes to it");
                }
            }
        }
    }

    /** Sources are restarted one by one (unchanged ones keep their stream); nothing else restarts. */
    @Override
    public ReloadClass reloadClass(KvCacheIndexConfig before, KvCacheIndexConfig after) {
        return ReloadClass.IMMEDIATE;
    }
}
