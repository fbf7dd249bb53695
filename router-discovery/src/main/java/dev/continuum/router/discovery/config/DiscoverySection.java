package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.Secret;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.discovery}: binds and validates the section in one pass, reporting every problem with its
 * dotted path, and tells the reload planner how a change takes effect. Register it with the config loader:
 * {@code ConfigLoader.builder().environment(env).dynamoSection(DiscoverySection.create(env))}, then read the
 * value with {@code config.dynamo().section(section)}.
 */
public final class DiscoverySection implements DynamoSection<DiscoveryConfig> {
    /** MAX_DYNAMO_NAMESPACES: namespaces one router may watch. */
    public static final int MAX_DYNAMO_NAMESPACES = 16;
    public static final int MAX_ENDPOINTS = 16;
    static final String LABEL_VALUE_RULE = "a Kubernetes label value: 1 to 63 letters, digits, '-', '_' or '.', "
            + "starting and ending with a letter or digit";
    static final String NAMESPACE_RULE = "a non-empty name without '/', whitespace or control characters";
    static final String SOURCES = "etcd, file, kubernetes or kubernetes_pods";

    private final Map<String, String> environment;

    private DiscoverySection(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    /** @param environment where the file store's default root ({@code DYN_FILE_KV}) is read */
    public static DiscoverySection create(Map<String, String> environment) {
        return new DiscoverySection(environment);
    }

    @Override
    public String key() {
        return "discovery";
    }

    @Override
    public Class<DiscoveryConfig> type() {
        return DiscoveryConfig.class;
    }

    @Override
    public DiscoveryConfig defaults() {
        return new DiscoveryConfig(DiscoverySourceKind.ETCD, EtcdConfig.defaults(), FileStoreConfig.defaults(environment));
    }

    @Override
    public DiscoveryConfig bind(ConfigNode node, Problems problems) {
        if (node.isPresent() && node.kind() != ConfigNode.Kind.MAP) {
            node.invalid("a map with source, etcd and file");
            return defaults();
        }
        ConfigNode sourceNode = node.get("source");
        DiscoverySourceKind source = sourceNode.asChoice(DiscoverySourceKind.ETCD,
                DiscoverySourceKind::fromConfigNameOrNull, SOURCES);
        if (source == DiscoverySourceKind.KUBERNETES_PODS) {
            sourceNode.warning("Pods carry no model cards or load: no capacity, dp_rank or kv_metrics signals, "
                    + "workers are picked round-robin (prefer source: kubernetes where RBAC allows)");
        }
        EtcdConfig etcd = bindEtcd(node.get("etcd"));
        FileStoreConfig file = bindFile(node.get("file"));
        KubernetesConfig kubernetes = bindKubernetes(node.get("kubernetes"), source);
        return new DiscoveryConfig(source, etcd, file, kubernetes);
    }

    /**
     * The rules apply whenever the section is written; the ones that only make sense for the active source
     * (a namespace is required, exactly one of model/models for Pods) only when a Kubernetes source is chosen,
     * so a config can carry an inactive section while another source runs.
     */
    private static KubernetesConfig bindKubernetes(ConfigNode k8s, DiscoverySourceKind source) {
        KubernetesConfig defaults = KubernetesConfig.defaults();
        boolean active = source == DiscoverySourceKind.KUBERNETES || source == DiscoverySourceKind.KUBERNETES_PODS;
        if (k8s.isPresent() && k8s.kind() != ConfigNode.Kind.MAP) {
            k8s.invalid("a map with namespace, dynamo_namespace, model or models and watch_reconnect_backoff");
            return defaults;
        }
        ConfigNode namespaceNode = k8s.get("namespace");
        String namespace = namespaceNode.asStringOrNull();
        if (namespace == null) {
            if (active && !namespaceNode.isPresent()) {
                namespaceNode.error("missing (expected: the fleet's Kubernetes namespace, a DNS-1123 label)");
            }
            namespace = KubernetesConfig.DEFAULT_NAMESPACE;
        } else if (!KubernetesConfig.dns1123Label(namespace)) {
            namespaceNode.invalid("a DNS-1123 label: 1 to 63 lowercase letters, digits or '-', starting and ending "
                    + "with a letter or digit");
        }

        ConfigNode oneNode = k8s.get("dynamo_namespace");
        String one = oneNode.asString(DynamoSnapshot.DEFAULT_NAMESPACE);
        if (oneNode.kind() == ConfigNode.Kind.SCALAR && !KubernetesConfig.labelValue(one)) {
            oneNode.invalid(LABEL_VALUE_RULE);
        }
        ConfigNode severalNode = k8s.get("dynamo_namespaces");
        List<String> several = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        List<ConfigNode> elements = severalNode.elements();
        if (elements.size() > MAX_DYNAMO_NAMESPACES) {
            severalNode.error(elements.size() + " namespaces (expected: at most " + MAX_DYNAMO_NAMESPACES
                    + ", MAX_DYNAMO_NAMESPACES)");
        }
        for (ConfigNode element : elements) {
            String name = element.asStringOrNull();
            if (name == null || !KubernetesConfig.labelValue(name)) {
                element.invalid(LABEL_VALUE_RULE);
            } else if (!seen.add(name)) {
                element.invalid("unique namespaces");
            } else {
                several.add(name);
            }
        }
        if (!several.isEmpty() && oneNode.isPresent() && !one.equals(DynamoSnapshot.DEFAULT_NAMESPACE)) {
            oneNode.invalid("either dynamo_namespace or dynamo_namespaces, not both (a non-default dynamo_namespace "
                    + "excludes the list)");
        }
        List<String> effective = several.isEmpty() ? List.of(one) : several;

        ConfigNode modelNode = k8s.get("model");
        String model = modelNode.asStringOrNull();
        if (model != null && (model.isEmpty() || model.chars().anyMatch(Character::isWhitespace))) {
            modelNode.invalid("a non-empty model name without whitespace");
            model = null;
        }
        ConfigNode modelsNode = k8s.get("models");
        List<KubernetesConfig.ModelMapping> models = bindModels(modelsNode, effective);
        boolean modelGiven = modelNode.kind() != ConfigNode.Kind.MISSING;
        boolean modelsGiven = modelsNode.kind() != ConfigNode.Kind.MISSING;
        if (source == DiscoverySourceKind.KUBERNETES && (modelGiven || modelsGiven)) {
            (modelGiven ? modelNode : modelsNode).warning("ignored under source: kubernetes (each worker's model "
                    + "comes from its model card)");
        } else if (source == DiscoverySourceKind.KUBERNETES_PODS) {
            if (modelGiven && modelsGiven) {
                modelsNode.error("set together with model (expected: exactly one of model or models)");
            } else if (!modelGiven && !modelsGiven) {
                modelNode.error("missing (expected: exactly one of model or models with source: kubernetes_pods)");
            }
        }
        if (source == DiscoverySourceKind.KUBERNETES) {
            // Ignored, and kept out of the value so editing them neither restarts nor empties anything.
            model = null;
            models = List.of();
        }
        BackoffConfig backoff = bindBackoff(k8s.get("watch_reconnect_backoff"));
        return new KubernetesConfig(namespace, one, several, model, models, backoff);
    }

    private static List<KubernetesConfig.ModelMapping> bindModels(ConfigNode modelsNode,
                                                                  List<String> dynamoNamespaces) {
        List<KubernetesConfig.ModelMapping> models = new ArrayList<>();
        if (modelsNode.kind() == ConfigNode.Kind.MISSING) {
            return models;
        }
        List<ConfigNode> entries = modelsNode.elements();
        if (modelsNode.kind() == ConfigNode.Kind.NULL || (modelsNode.kind() == ConfigNode.Kind.LIST && entries.isEmpty())) {
            modelsNode.error("empty (expected: 1 to " + KubernetesConfig.MAX_MODEL_MAPPINGS + " entries)");
            return models;
        }
        if (entries.size() > KubernetesConfig.MAX_MODEL_MAPPINGS) {
            modelsNode.error(entries.size() + " entries (expected: at most " + KubernetesConfig.MAX_MODEL_MAPPINGS + ")");
        }
        boolean several = dynamoNamespaces.size() > 1;
        Set<String> seen = new HashSet<>();
        for (ConfigNode entry : entries) {
            if (entry.kind() != ConfigNode.Kind.MAP) {
                entry.invalid("a map with component and model");
                continue;
            }
            ConfigNode componentNode = entry.get("component");
            String component = componentNode.asStringOrNull();
            boolean valid = true;
            if (component == null || !KubernetesConfig.labelValue(component)) {
                if (!componentNode.isPresent()) {
                    componentNode.error("missing (expected: an nvidia.com/dynamo-component label value)");
                } else {
                    componentNode.invalid("an nvidia.com/dynamo-component label value");
                }
                valid = false;
            }
            ConfigNode modelNode = entry.get("model");
            String model = modelNode.asStringOrNull();
            if (model == null || model.isEmpty() || model.chars().anyMatch(Character::isWhitespace)) {
                if (!modelNode.isPresent()) {
                    modelNode.error("missing (expected: a non-empty model name without whitespace)");
                } else {
                    modelNode.invalid("a non-empty model name without whitespace");
                }
                valid = false;
            }
            ConfigNode nsNode = entry.get("dynamo_namespace");
            String ns = nsNode.asStringOrNull();
            if (ns == null && several) {
                nsNode.error("missing (expected: one of dynamo_namespaces " + dynamoNamespaces
                        + " when several are watched)");
                valid = false;
            } else if (ns != null && !dynamoNamespaces.contains(ns)) {
                nsNode.invalid("one of the watched Dynamo namespaces " + dynamoNamespaces);
                valid = false;
            }
            if (!valid) {
                continue;
            }
            String identity = (ns == null ? dynamoNamespaces.get(0) : ns) + "/" + component;
            if (!seen.add(identity)) {
                componentNode.invalid("unique components" + (several ? " per Dynamo namespace" : ""));
                continue;
            }
            models.add(new KubernetesConfig.ModelMapping(ns, component, model));
        }
        return models;
    }

    private EtcdConfig bindEtcd(ConfigNode etcd) {
        ConfigNode endpointsNode = etcd.get("endpoints");
        List<String> endpoints = new ArrayList<>();
        boolean http = false;
        boolean https = false;
        List<ConfigNode> elements = endpointsNode.elements();
        if (elements.size() > MAX_ENDPOINTS) {
            endpointsNode.error(elements.size() + " endpoints (expected: at most " + MAX_ENDPOINTS + ")");
        }
        for (ConfigNode element : elements) {
            String text = element.asStringOrNull();
            if (text == null) {
                if (element.kind() == ConfigNode.Kind.NULL) {
                    element.invalid("an http(s)://host:port URL or host:port");
                }
                // Any other non-string was reported by asStringOrNull.
                continue;
            }
            EtcdEndpoints.Result result = EtcdEndpoints.parse(text);
            if (result instanceof EtcdEndpoints.Invalid invalid) {
                // Shown without its user info: a refused endpoint may carry a password.
                element.error(Problems.render(EtcdEndpoints.maskUserInfo(text)) + " (expected: "
                        + invalid.expectation() + ")");
            } else {
                EtcdEndpoints.Valid valid = (EtcdEndpoints.Valid) result;
                endpoints.add(valid.url());
                https |= valid.https();
                http |= !valid.https();
            }
        }
        if (http && https) {
            endpointsNode.error("mixes http:// and https:// endpoints (expected: one scheme for all endpoints)");
        }

        Namespaces namespaces = bindNamespaces(etcd);
        EtcdTlsConfig tls = bindTls(etcd.get("tls"));
        if (tls != null && http) {
            etcd.get("tls").error("a tls block with http:// endpoints (expected: https:// endpoints with tls; a bare "
                    + "host:port means http://)");
        }
        EtcdAuthConfig auth = bindAuth(etcd.get("auth"));
        if (auth != null && tls == null && !https) {
            etcd.get("auth").warning("authentication over plaintext http:// without tls: the Authenticate RPC "
                    + "and the session token travel in cleartext");
        }
        BackoffConfig backoff = bindBackoff(etcd.get("watch_reconnect_backoff"));
        return new EtcdConfig(endpoints, namespaces.namespace(), namespaces.namespaces(), tls, auth, backoff);
    }

    private FileStoreConfig bindFile(ConfigNode file) {
        FileStoreConfig defaults = FileStoreConfig.defaults(environment);
        ConfigNode rootNode = file.get("root");
        Path root = defaults.root();
        String rootText = rootNode.asStringOrNull();
        if (rootText != null) {
            try {
                if (rootText.isEmpty()) {
                    rootNode.invalid("a directory path");
                } else {
                    root = Path.of(rootText);
                }
            } catch (InvalidPathException e) {
                rootNode.invalid("a directory path");
            }
        }
        Namespaces namespaces = bindNamespaces(file);
        ConfigNode ttlNode = file.get("ttl");
        // Upstream floors the TTL at 1 s.
        Duration ttl = ttlNode.asDuration(FileStoreConfig.DEFAULT_TTL, Duration.ofSeconds(1), Duration.ofHours(1));
        ConfigNode rescanNode = file.get("rescan_interval");
        Duration rescan = rescanNode.asDuration(FileStoreConfig.DEFAULT_RESCAN_INTERVAL, Duration.ofMillis(10),
                Duration.ofMinutes(10));
        if (rescan.compareTo(ttl) > 0) {
            rescanNode.warning("rescans less often than the ttl (" + ttl.toMillis() + " ms): expired workers stay "
                    + "listed until the next rescan");
        }
        return new FileStoreConfig(root, namespaces.namespace(), namespaces.namespaces(), ttl, rescan);
    }

    private record Namespaces(String namespace, List<String> namespaces) {
    }

    private static Namespaces bindNamespaces(ConfigNode parent) {
        ConfigNode namespaceNode = parent.get("namespace");
        String namespace = namespaceNode.asString(DynamoSnapshot.DEFAULT_NAMESPACE);
        if (namespaceNode.isPresent() && !validNamespace(namespace)) {
            namespaceNode.invalid(NAMESPACE_RULE);
        }
        ConfigNode listNode = parent.get("namespaces");
        List<String> namespaces = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        List<ConfigNode> elements = listNode.elements();
        if (elements.size() > MAX_DYNAMO_NAMESPACES) {
            listNode.error(elements.size() + " namespaces (expected: at most " + MAX_DYNAMO_NAMESPACES
                    + ", MAX_DYNAMO_NAMESPACES)");
        }
        for (ConfigNode element : elements) {
            String name = element.asStringOrNull();
            if (name == null || !validNamespace(name)) {
                element.invalid(NAMESPACE_RULE);
            } else if (!seen.add(name)) {
                element.invalid("unique namespaces");
            } else {
                namespaces.add(name);
            }
        }
        if (!namespaces.isEmpty() && namespaceNode.isPresent()
                && !namespace.equals(DynamoSnapshot.DEFAULT_NAMESPACE)) {
            namespaceNode.invalid("either namespace or namespaces, not both (a non-default namespace excludes the list)");
        }
        return new Namespaces(namespace, namespaces);
    }

    static boolean validNamespace(String name) {
        return !name.isEmpty() && name.chars().noneMatch(c -> c == '/' || Character.isWhitespace(c)
                || Character.isISOControl(c) || Character.isSpaceChar(c));
    }

    private static @Nullable EtcdTlsConfig bindTls(ConfigNode tls) {
        if (!tls.isPresent()) {
            // An explicit empty block still asks for TLS with the JDK's trust store.
            return tls.kind() == ConfigNode.Kind.NULL ? new EtcdTlsConfig(null, null, null, null) : null;
        }
        if (tls.kind() != ConfigNode.Kind.MAP) {
            tls.invalid("a map with ca_cert, client_cert, client_key and server_name");
            return null;
        }
        Path caCert = path(tls.get("ca_cert"));
        ConfigNode certNode = tls.get("client_cert");
        Path clientCert = path(certNode);
        ConfigNode keyNode = tls.get("client_key");
        Secret clientKey = keyNode.asSecret();
        if (clientKey != null && clientKey.reveal().isEmpty()) {
            keyNode.error("\"\" (expected: a key file path)");
            clientKey = null;
        }
        if (clientCert != null && clientKey == null) {
            keyNode.error("missing (expected: client_cert and client_key set together)");
        } else if (clientCert == null && clientKey != null) {
            certNode.error("missing (expected: client_cert and client_key set together)");
        }
        ConfigNode serverNameNode = tls.get("server_name");
        String serverName = serverNameNode.asStringOrNull();
        if (serverName != null && (serverName.isEmpty() || serverName.chars().anyMatch(c -> Character.isWhitespace(c)
                || c == '/' || c == ':' || c == '@'))) {
            serverNameNode.invalid("a host name");
            serverName = null;
        }
        return new EtcdTlsConfig(caCert, clientCert, clientKey, serverName);
    }

    private static @Nullable Path path(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            return null;
        }
        try {
            if (!text.isEmpty()) {
                return Path.of(text);
            }
        } catch (InvalidPathException e) {
            // reported below
        }
        node.invalid("a file path");
        return null;
    }

    private static @Nullable EtcdAuthConfig bindAuth(ConfigNode auth) {
        if (!auth.isPresent()) {
            return null;
        }
        if (auth.kind() != ConfigNode.Kind.MAP) {
            auth.invalid("a map with username and password");
            return null;
        }
        ConfigNode userNode = auth.get("username");
        String username = userNode.asStringOrNull();
        ConfigNode passwordNode = auth.get("password");
        Secret password = passwordNode.asSecret();
        boolean valid = true;
        if (username == null || username.isEmpty()) {
            userNode.invalid("a non-empty username");
            valid = false;
        }
        if (password == null || password.reveal().isEmpty()) {
            passwordNode.error((password == null ? "missing" : "\"\"") + " (expected: a non-empty password)");
            valid = false;
        }
        return valid ? new EtcdAuthConfig(username, password) : null;
    }

    private static BackoffConfig bindBackoff(ConfigNode backoff) {
        ConfigNode initialNode = backoff.get("initial");
        Duration initial = initialNode.asPositiveDuration(BackoffConfig.DEFAULT_INITIAL);
        ConfigNode maxNode = backoff.get("max");
        Duration max = maxNode.asPositiveDuration(BackoffConfig.DEFAULT_MAX);
        if (max.compareTo(initial) < 0) {
            (maxNode.isPresent() ? maxNode : initialNode).error(max.toMillis() + " ms is below initial ("
                    + initial.toMillis() + " ms) (expected: max >= initial)");
            max = initial;
        }
        return new BackoffConfig(initial, max);
    }

    @Override
    public void crossCheck(DiscoveryConfig value, RouterConfig config, Problems problems) {
        if (config.dynamo().enabled() && value.source() == DiscoverySourceKind.ETCD && value.etcd().endpoints().isEmpty()) {
            problems.error("dynamo.discovery.etcd.endpoints",
                    "[] (expected: at least one endpoint when dynamo.enabled is true)");
        }
    }

    /**
     * Nothing restarts when only the inactive source's settings changed; anything else replaces the watcher
     * (how far is decided by {@link DiscoveryReloadPlan} at runtime, without a process restart).
     */
    @Override
    public ReloadClass reloadClass(DiscoveryConfig before, DiscoveryConfig after) {
        return DiscoveryReloadPlan.of(true, before, true, after).action() == DiscoveryReloadPlan.Action.NOTHING
                ? ReloadClass.IMMEDIATE : ReloadClass.RESTART_SUBSYSTEM;
    }

    /** The YAML shape; {@code client_key} and {@code password} go in as secrets, so readbacks mask them. */
    @Override
    public Object render(DiscoveryConfig value) {
        Map<String, Object> tree = new LinkedHashMap<>();
        tree.put("source", value.source().configName());
        EtcdConfig etcd = value.etcd();
        Map<String, Object> etcdTree = new LinkedHashMap<>();
        etcdTree.put("endpoints", etcd.endpoints());
        etcdTree.put("namespace", etcd.namespace());
        if (!etcd.namespaces().isEmpty()) {
            etcdTree.put("namespaces", etcd.namespaces());
        }
        if (etcd.tls() != null) {
            Map<String, Object> tls = new LinkedHashMap<>();
            putIfSet(tls, "ca_cert", etcd.tls().caCert());
            putIfSet(tls, "client_cert", etcd.tls().clientCert());
            putIfSet(tls, "client_key", etcd.tls().clientKey());
            putIfSet(tls, "server_name", etcd.tls().serverName());
            etcdTree.put("tls", tls);
        }
        if (etcd.auth() != null) {
            Map<String, Object> auth = new LinkedHashMap<>();
            auth.put("username", etcd.auth().username());
            auth.put("password", etcd.auth().password());
            etcdTree.put("auth", auth);
        }
        Map<String, Object> backoff = new LinkedHashMap<>();
        backoff.put("initial", etcd.watchReconnectBackoff().initial());
        backoff.put("max", etcd.watchReconnectBackoff().max());
        etcdTree.put("watch_reconnect_backoff", backoff);
        tree.put("etcd", etcdTree);
        FileStoreConfig file = value.file();
        Map<String, Object> fileTree = new LinkedHashMap<>();
        fileTree.put("root", file.root().toString());
        fileTree.put("namespace", file.namespace());
        if (!file.namespaces().isEmpty()) {
            fileTree.put("namespaces", file.namespaces());
        }
        fileTree.put("ttl", file.ttl());
        fileTree.put("rescan_interval", file.rescanInterval());
        tree.put("file", fileTree);
        KubernetesConfig k8s = value.kubernetes();
        Map<String, Object> k8sTree = new LinkedHashMap<>();
        k8sTree.put("namespace", k8s.namespace());
        k8sTree.put("dynamo_namespace", k8s.dynamoNamespace());
        if (!k8s.dynamoNamespaces().isEmpty()) {
            k8sTree.put("dynamo_namespaces", k8s.dynamoNamespaces());
        }
        putIfSet(k8sTree, "model", k8s.model());
        if (!k8s.models().isEmpty()) {
            List<Map<String, Object>> models = new ArrayList<>();
            for (KubernetesConfig.ModelMapping m : k8s.models()) {
                Map<String, Object> entry = new LinkedHashMap<>();
                putIfSet(entry, "dynamo_namespace", m.dynamoNamespace());
                entry.put("component", m.component());
                entry.put("model", m.model());
                models.add(entry);
            }
            k8sTree.put("models", models);
        }
        Map<String, Object> k8sBackoff = new LinkedHashMap<>();
        k8sBackoff.put("initial", k8s.watchReconnectBackoff().initial());
        k8sBackoff.put("max", k8s.watchReconnectBackoff().max());
        k8sTree.put("watch_reconnect_backoff", k8sBackoff);
        tree.put("kubernetes", k8sTree);
        return tree;
    }

    private static void putIfSet(Map<String, Object> tree, String key, @Nullable Object value) {
        if (value != null) {
            tree.put(key, value instanceof Path p ? p.toString() : value);
        }
    }
}
