package dev.continuum.router.agents;

import dev.continuum.router.core.config.ConfigDocument;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.eventbus.config.BackendStreamNodes;
import dev.continuum.router.eventbus.config.BackendTrust;
import dev.continuum.router.eventbus.config.EventBusSection;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The kv-listener's configuration file (docs/event-bus.md, "The kv-listener"):
 *
 * <pre>
 * bus:                                  # the same block as the event broker's
 *   url: https://router.example.com:7443
 *   client_id: kv-listener-a
 *   token_file: /var/run/secrets/continuum-bus/token
 *   tls: {ca: ..., cert: ..., key: ...}
 *   drain_timeout: 10s
 * sources:                              # 1..64, each backend in the entry's backends grant
 *   - backend: vllm-1
 *     url: http://vllm-1.dynamo:8000/kv/events
 *   - backend: vllm-2
 *     url: https://vllm-2.dynamo:8443/kv/events
 *     tls: {ca: /etc/continuum-kv-listener/backend-ca.pem}   # optional: else the JDK's trust store
 * </pre>
 *
 * Every problem names its field path; the token is never echoed.
 *
 * @param agent   how to reach and authenticate to the bus
 * @param sources each announced backend's SSE URL, in file order
 * @param trust   the CA bundle of each {@code https} source that names one ({@code sources[].tls.ca}); the others
 *                are verified against the JDK's trust store
 */
public record KvListenerConfig(AgentSettings agent, Map<String, URI> sources, Map<String, BackendTrust> trust) {
    public KvListenerConfig {
        sources = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(sources));
        trust = Map.copyOf(trust);
    }

    public KvListenerConfig(AgentSettings agent, Map<String, URI> sources) {
        this(agent, sources, Map.of());
    }

    public record Result(@Nullable KvListenerConfig config, List<Problem> problems) {
    }

    public static Result load(Path file, Map<String, String> environment) {
        Problems problems = new Problems();
        ConfigDocument document = ConfigDocument.read(file, environment, problems);
        if (document == null) {
            return new Result(null, problems.all());
        }
        KvListenerConfig config = bind(document.root(), problems);
        document.reportUnknownKeys();
        return new Result(problems.hasErrors() ? null : config, problems.all());
    }

    static @Nullable KvListenerConfig bind(ConfigNode root, Problems problems) {
        EventBrokerConfig.BusPart bus = EventBrokerConfig.bus(root.get("bus"), "this kv-listener's");
        ConfigNode sourcesNode = root.get("sources");
        List<ConfigNode> entries = sourcesNode.elements();
        if (entries.isEmpty()) {
            sourcesNode.error("none (expected: 1.." + EventBusSection.MAX_BACKENDS
                    + " entries {backend, url}; hello must announce at least one)");
        } else if (entries.size() > EventBusSection.MAX_BACKENDS) {
            sourcesNode.error(entries.size() + " entries (expected: at most " + EventBusSection.MAX_BACKENDS + ")");
        }
        Map<String, URI> sources = new LinkedHashMap<>();
        Map<String, BackendTrust> trust = new LinkedHashMap<>();
        for (ConfigNode entry : entries) {
            ConfigNode backendNode = entry.get("backend");
            String backend = backendNode.asStringOrNull();
            URI url = BackendStreamNodes.url(entry.get("url"));
            // ca as the file's bus block names its CA
            BackendTrust ca = url == null ? null : BackendStreamNodes.tls(entry.get("tls"), url, "ca").trust();
            if (backend == null || backend.isEmpty()
                    || backend.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > 128) {
                backendNode.error((backend == null ? "missing" : Problems.render(backend))
                        + " (expected: the backend's name, 1..128 bytes, as the router's backends[] and the grant name it)");
            } else if (sources.containsKey(backend)) {
                backendNode.error(Problems.render(backend) + " (expected: each backend once)");
            } else if (url != null) {
                sources.put(backend, url);
                if (ca != null) {
                    trust.put(backend, ca);
                }
            }
        }
        if (problems.hasErrors() || bus == null) {
            return null;
        }
        return new KvListenerConfig(bus.settings(List.of()), sources, trust);
    }
}
