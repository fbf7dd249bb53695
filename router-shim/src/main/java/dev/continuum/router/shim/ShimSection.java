package dev.continuum.router.shim;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Binds, validates and diffs {@code dynamo.shim}:
 *
 * <pre>
 * dynamo:
 *   shim:
 *     backends: [dynamo-frontend]        # one watched namespace: up to 64 backends[].name entries
 *     pools:                             # several namespaces: exactly one pool per namespace, instead of backends
 *       - {namespace: prod, backends: [frontend-prod]}
 *       - {namespace: canary, backends: [frontend-canary]}
 *     model_map:                         # client model ID -> Dynamo display_name, up to 1024 pairs
 *       qwen: Qwen/Qwen3-32B
 * </pre>
 *
 * Every key applies immediately on reload (the next request selects with it), without touching the discovery
 * watcher or the registry. Register one instance with the config loader
 * ({@code ConfigLoader.builder().dynamoSection(new ShimSection())}).
 */
public final class ShimSection implements DynamoSection<ShimConfig> {
    /**
     * Discovery and load run, yet nothing is pinned: the requests go to the backends unpinned, and a
     * {@code dynamo.frontend --router-mode direct} refuses every one of them.
     */
    static final String NOTHING_PINNED = "unset while dynamo.enabled is true: no request is pinned to a worker, and "
            + "a dynamo.frontend in --router-mode direct refuses every unpinned request (fix: list the frontend "
            + "backends here, for example backends: [dynamo-frontend], and set disaggregated_serving.enabled: true)";

    @Override
    public String key() {
        return "shim";
    }

    @Override
    public Class<ShimConfig> type() {
        return ShimConfig.class;
    }

    @Override
    public ShimConfig defaults() {
        return ShimConfig.DEFAULTS;
    }

    @Override
    public @Nullable ShimConfig bind(ConfigNode node, Problems problems) {
        ConfigNode backendsNode = node.get("backends");
        ConfigNode poolsNode = node.get("pools");
        List<String> backends = names(backendsNode);
        List<ShimConfig.Pool> pools = pools(poolsNode);
        if (backendsNode.isPresent() && poolsNode.isPresent()) {
            poolsNode.error("set together with dynamo.shim.backends (expected: either backends or pools, not both)");
        }
        int total = backends.size();
        for (ShimConfig.Pool p : pools) {
            total += p.backends().size();
        }
        if (total > ShimConfig.MAX_BACKENDS) {
            node.error(total + " shim backends (expected: at most " + ShimConfig.MAX_BACKENDS + ")");
        }
        return new ShimConfig(backends, pools, modelMap(node.get("model_map")));
    }

    /** A list of unique, non-empty backend names. */
    private static List<String> names(ConfigNode node) {
        List<String> out = new ArrayList<>();
        if (!node.isPresent()) {
            return out;
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of backends[].name entries");
            return out;
        }
        for (ConfigNode element : node.elements()) {
            String name = element.asStringOrNull();
            if (name == null || name.isBlank()) {
                element.invalid("a backends[].name entry");
            } else if (out.contains(name)) {
                element.invalid("unique backend names");
            } else {
                out.add(name);
            }
        }
        return out;
    }

    private static List<ShimConfig.Pool> pools(ConfigNode node) {
        List<ShimConfig.Pool> out = new ArrayList<>();
        if (!node.isPresent()) {
            return out;
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of {namespace, backends} pools");
            return out;
        }
        Set<String> namespaces = new HashSet<>();
        Map<String, String> owner = new HashMap<>();
        for (ConfigNode element : node.elements()) {
            ConfigNode nsNode = element.get("namespace");
            String ns = nsNode.asStringOrNull();
            ConfigNode backendsNode = element.get("backends");
            List<String> backends = names(backendsNode);
            if (ns == null || ns.isBlank()) {
                nsNode.invalid("a Dynamo namespace");
                continue;
            }
            if (!namespaces.add(ns)) {
                nsNode.invalid("exactly one pool per namespace");
                continue;
            }
            if (backends.isEmpty() && !backendsNode.isPresent()) {
                backendsNode.invalid("at least one backends[].name entry");
            } else if (backends.isEmpty() && backendsNode.kind() == ConfigNode.Kind.LIST
                    && backendsNode.elements().isEmpty()) {
                backendsNode.error("[] (expected: at least one backends[].name entry)");
            }
            for (String b : backends) {
                String previous = owner.putIfAbsent(b, ns);
                if (previous != null) {
                    backendsNode.error("\"" + b + "\" (expected: a backend in at most one pool; already in the pool of "
                            + "namespace \"" + previous + "\")");
                }
            }
            out.add(new ShimConfig.Pool(ns, backends));
        }
        return out;
    }

    private static Map<String, String> modelMap(ConfigNode node) {
        Map<String, String> out = new LinkedHashMap<>();
        if (!node.isPresent()) {
            return out;
        }
        Map<String, ConfigNode> entries = node.entries();
        if (entries.size() > ShimConfig.MAX_MODEL_MAP_ENTRIES) {
            node.error(entries.size() + " entries (expected: at most " + ShimConfig.MAX_MODEL_MAP_ENTRIES + ")");
            return out;
        }
        for (Map.Entry<String, ConfigNode> e : entries.entrySet()) {
            String value = e.getValue().asStringOrNull();
            if (e.getKey().isBlank()) {
                e.getValue().error("empty client model ID (expected: a non-empty key)");
            } else if (value == null || value.isBlank()) {
                e.getValue().invalid("a non-empty Dynamo model name");
            } else {
                out.put(e.getKey(), value);
            }
        }
        return out;
    }

    @Override
    public void crossCheck(ShimConfig value, RouterConfig config, Problems problems) {
        if (!value.configured()) {
            if (config.dynamo().enabled()) {
                problems.warning("dynamo.shim.backends", NOTHING_PINNED);
            }
            return;
        }
        String listPath = value.pools().isEmpty() ? "dynamo.shim.backends" : "dynamo.shim.pools";
        if (!config.dynamo().enabled() || !config.disaggregatedServing().enabled()) {
            problems.warning(listPath, "shim replicas are listed but "
                    + (config.dynamo().enabled() ? "disaggregated_serving.enabled" : "dynamo.enabled")
                    + " is false (no request is pinned)");
        }
        Map<String, BackendConfig> byName = new HashMap<>();
        for (BackendConfig b : config.backends()) {
            byName.put(b.name(), b);
        }
        checkReferences(value.backends(), "dynamo.shim.backends", byName, problems);
        for (int i = 0; i < value.pools().size(); i++) {
            checkReferences(value.pools().get(i).backends(), "dynamo.shim.pools[" + i + "].backends", byName,
                    problems);
        }

        List<String> namespaces = watchedNamespaces(config);
        if (namespaces.size() > 1 && value.pools().isEmpty()) {
            problems.error("dynamo.shim.backends", "set while " + namespaces.size()
                    + " namespaces are watched (expected: dynamo.shim.pools, one pool per namespace)");
            return;
        }
        if (value.pools().isEmpty()) {
            return;
        }
        Set<String> pooled = new HashSet<>();
        for (int i = 0; i < value.pools().size(); i++) {
            String ns = value.pools().get(i).namespace();
            pooled.add(ns);
            if (!namespaces.contains(ns)) {
                problems.invalid("dynamo.shim.pools[" + i + "].namespace", ns,
                        "one of the watched namespaces " + namespaces);
            }
        }
        for (String ns : namespaces) {
            if (!pooled.contains(ns)) {
                problems.error("dynamo.shim.pools", "no pool for namespace \"" + ns
                        + "\" (expected: exactly one pool per watched namespace)");
            }
        }
    }

    private static void checkReferences(List<String> names, String path, Map<String, BackendConfig> byName,
            Problems problems) {
        for (int i = 0; i < names.size(); i++) {
            BackendConfig b = byName.get(names.get(i));
            if (b == null) {
                problems.invalid(path + "[" + i + "]", names.get(i), "the name of a configured backend");
            } else if (b.internal() || !b.enabled()) {
                problems.warning(path + "[" + i + "]", "\"" + b.name() + "\" is "
                        + (b.internal() ? "internal: true" : "enabled: false") + " (a shim replica is an ordinary "
                        + "enabled backend)");
            }
        }
    }

    /** The namespaces discovery watches (Dynamo's default namespace without a discovery section). */
    static List<String> watchedNamespaces(RouterConfig config) {
        return config.dynamo().find(DiscoveryConfig.class).orElseGet(DiscoveryConfig::defaults).namespaces();
    }

    /** Every key applies on the next request. */
    @Override
    public ReloadClass reloadClass(ShimConfig before, ShimConfig after) {
        return ReloadClass.IMMEDIATE;
    }
}
