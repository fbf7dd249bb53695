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
    static final String NAMESPACE_RULE = "a non-empty name without '/', whitespace or control characters";
    static final String SOURCES = "etcd or file (kubernetes and kubernetes_pods are not supported by this build yet)";

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
        if (source == DiscoverySourceKind.KUBERNETES || source == DiscoverySourceKind.KUBERNETES_PODS) {
            sourceNode.invalid(SOURCES);
        }
        EtcdConfig etcd = bindEtcd(node.get("etcd"));
        FileStoreConfig file = bindFile(node.get("file"));
        ConfigNode kubernetes = node.get("kubernetes");
        if (kubernetes.isPresent()) {
            kubernetes.markUsed();
            kubernetes.warning("the Kubernetes sources are not in this build; the section is parsed but inactive");
        }
        return new DiscoveryConfig(source, etcd, file);
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
                element.invalid(invalid.expectation());
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
        return tree;
    }

    private static void putIfSet(Map<String, Object> tree, String key, @Nullable Object value) {
        if (value != null) {
            tree.put(key, value instanceof Path p ? p.toString() : value);
        }
    }
}
