package dev.continuum.router.eventbus;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.internal.TreeNode;
import dev.continuum.router.eventbus.config.BackendTrust;
import dev.continuum.router.eventbus.config.EventBusSection;
import java.net.URI;
import java.net.URISyntaxException;
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
        TreeNode root = EventBrokerConfig.read(file, environment, problems);
        if (root == null) {
            return new Result(null, problems.all());
        }
        KvListenerConfig config = bind(root, problems);
        root.reportUnknownKeys();
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
            URI url = url(entry.get("url"));
            BackendTrust ca = url == null ? null : ca(entry.get("tls"), url);
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

    /** {@code sources[].tls}: only for https; {@code ca} as the bus block names its CA. */
    private static @Nullable BackendTrust ca(ConfigNode tls, URI url) {
        if (!tls.isPresent() && tls.kind() != ConfigNode.Kind.NULL) {
            return null;
        }
        if (!"https".equals(url.getScheme())) {
            tls.error("set (expected: only with an https:// url)");
            return null;
        }
        if (tls.isPresent() && tls.kind() != ConfigNode.Kind.MAP) {
            tls.invalid("a map with ca");
            return null;
        }
        ConfigNode ca = tls.get("ca");
        return ca.isPresent() ? BackendTrust.bind(ca) : null;
    }

    /** {@code http}, or {@code https} verified as {@link BackendTls} says. */
    private static @Nullable URI url(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            node.error("missing (expected: http(s)://host:port/path of the backend's SSE KV-event stream)");
            return null;
        }
        try {
            URI uri = new URI(text.trim());
            if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null
                    || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
                node.error(Problems.render(Problems.maskUserInfo(text))
                        + " (expected: http(s)://host:port/path, no credentials or fragment)");
                return null;
            }
            return uri;
        } catch (URISyntaxException e) {
            node.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: http(s)://host:port/path)");
            return null;
        }
    }
}
