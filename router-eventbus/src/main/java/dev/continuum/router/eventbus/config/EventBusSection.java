package dev.continuum.router.eventbus.config;

import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Binds, validates and diffs {@code dynamo.event_bus} (docs/event-bus.md has the annotated example):
 *
 * <pre>
 * dynamo:
 *   event_bus:
 *     enabled: true
 *     listen: "0.0.0.0:7443"          # its own port: never one of server.bind_address
 *     tls: {cert: ..., key: ..., client_ca: ...}
 *     brokers:
 *       - id: broker-a.dynamo          # lowercase DNS name; a client certificate's DNS SAN
 *         role: broker                 # broker | kv_listener
 *         client_id: broker-a          # default: the id
 *         token_hash: "sha256:&lt;64 hex&gt;"
 *         namespaces: [dynamo]         # broker only; empty allows any
 *     max_sessions: 64
 *     max_streams_per_session: 1024
 *     max_session_buffer_bytes: 64MiB   # at least max_streams_per_session * 64 KiB
 *     heartbeat_interval: 10s
 *     idle_timeout: 30s
 * </pre>
 */
public final class EventBusSection implements DynamoSection<EventBusConfig> {
    private static final Pattern DNS_NAME = Pattern.compile(
            "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");
    /** The characters {@code hello.client_id} may carry (docs/event-bus-protocol.md, section 4.2). */
    public static final Pattern CLIENT_ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");
    /** Dynamo namespace names as hello may declare them. */
    public static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,63}");
    public static final int MAX_NAMESPACES = 16;
    public static final int MAX_BACKENDS = 64;
    private static final int MAX_NAME_BYTES = 128;

    @Override
    public String key() {
        return "event_bus";
    }

    @Override
    public Class<EventBusConfig> type() {
        return EventBusConfig.class;
    }

    @Override
    public EventBusConfig defaults() {
        return EventBusConfig.DEFAULTS;
    }

    @Override
    public @Nullable EventBusConfig bind(ConfigNode node, Problems problems) {
        EventBusConfig d = EventBusConfig.DEFAULTS;
        boolean enabled = node.get("enabled").asBool(false);
        BindAddress.Tcp listen = listen(node.get("listen"), d.listen());
        BusTls tls = tls(node.get("tls"), enabled);
        int maxSessions = node.get("max_sessions").asInt(d.maxSessions(), 1, EventBusConfig.MAX_MAX_SESSIONS);
        ConfigNode streamsNode = node.get("max_streams_per_session");
        int maxStreams = streamsNode.asInt(d.maxStreamsPerSession(), 1, EventBusConfig.MAX_MAX_STREAMS_PER_SESSION);
        long buffer = bufferBytes(node.get("max_session_buffer_bytes"), streamsNode, maxStreams);
        ConfigNode heartbeatNode = node.get("heartbeat_interval");
        Duration heartbeat = heartbeatNode.asDuration(d.heartbeatInterval(), Duration.ofSeconds(1),
                Duration.ofMinutes(5));
        ConfigNode idleNode = node.get("idle_timeout");
        Duration idle = idleNode.asDuration(d.idleTimeout(), Duration.ofSeconds(2), Duration.ofHours(1));
        if (idle.compareTo(heartbeat) <= 0) {
            idleNode.error(Problems.render(idleNode.asString("")) + " (expected: longer than "
                    + heartbeatNode.path() + ", " + heartbeat.toMillis() + "ms, so a live client can answer in time)");
        }
        List<BrokerEntry> brokers = brokers(node.get("brokers"), tls != null && tls.clientCa() != null);
        if (enabled && brokers.isEmpty() && !problems.hasErrors()) {
            node.get("brokers").error("none (expected: at least one entry while enabled; nobody could connect)");
        }
        if (enabled && tls == null) {
            return null;
        }
        return new EventBusConfig(enabled, listen, tls, brokers, maxSessions, maxStreams, buffer, heartbeat, idle);
    }

    private static BindAddress.Tcp listen(ConfigNode node, BindAddress.Tcp defaultValue) {
        String text = node.asStringOrNull();
        if (text == null) {
            return defaultValue;
        }
        BindAddress.Tcp parsed = parseHostPort(text.trim());
        if (parsed == null) {
            node.invalid("host:port, [ipv6]:port or 0.0.0.0:7443 (a TCP address; unix sockets are not supported)");
            return defaultValue;
        }
        return parsed;
    }

    static BindAddress.@Nullable Tcp parseHostPort(String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            return null;
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        } else if (host.indexOf(':') >= 0) {
            return null;
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            return null;
        }
        if (host.isEmpty() || port < 0 || port > 65535) {
            return null;
        }
        return new BindAddress.Tcp(host, port);
    }

    private static @Nullable BusTls tls(ConfigNode node, boolean enabled) {
        if (!node.isPresent()) {
            if (enabled) {
                node.error("missing (expected: cert and key; the listener speaks TLS 1.3 only)");
            }
            return null;
        }
        String cert = requiredPath(node.get("cert"));
        String key = requiredPath(node.get("key"));
        String clientCa = node.get("client_ca").asStringOrNull();
        if (clientCa != null && clientCa.isBlank()) {
            node.get("client_ca").invalid("a PEM file of CA certificates, or omit the key");
            clientCa = null;
        }
        return cert == null || key == null ? null : new BusTls(cert, key, clientCa);
    }

    private static @Nullable String requiredPath(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null || text.isBlank()) {
            node.error("missing (expected: the path of a PEM file)");
            return null;
        }
        return text;
    }

    private static long bufferBytes(ConfigNode node, ConfigNode streamsNode, int maxStreams) {
        long bytes = node.asByteSize(new ByteSize(EventBusConfig.DEFAULT_MAX_SESSION_BUFFER_BYTES)).bytes();
        if (bytes > EventBusConfig.MAX_MAX_SESSION_BUFFER_BYTES) {
            node.invalid("at most 2147483647 bytes, the largest HTTP/2 window");
            return EventBusConfig.DEFAULT_MAX_SESSION_BUFFER_BYTES;
        }
        long floor = maxStreams * EventBusConfig.MIN_BUFFER_PER_STREAM;
        if (bytes < floor) {
            node.error(bytes + " bytes (expected: at least " + streamsNode.path() + " * 64 KiB = " + floor
                    + " bytes, four 16 KiB reservations per stream)");
        }
        return bytes;
    }

    private static List<BrokerEntry> brokers(ConfigNode node, boolean haveClientCa) {
        if (!node.isPresent()) {
            return List.of();
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of broker entries");
            return List.of();
        }
        List<ConfigNode> elements = node.elements();
        if (elements.size() > EventBusConfig.MAX_BROKERS) {
            node.error(elements.size() + " entries (expected: at most " + EventBusConfig.MAX_BROKERS + ")");
            return List.of();
        }
        List<BrokerEntry> out = new ArrayList<>();
        Map<String, String> ids = new HashMap<>();
        Map<String, String> hashes = new HashMap<>();
        for (ConfigNode element : elements) {
            BrokerEntry entry = broker(element, haveClientCa);
            if (entry == null) {
                continue;
            }
            String firstId = ids.putIfAbsent(entry.id(), element.path());
            if (firstId != null) {
                element.get("id").invalid("each id once; same as " + firstId + ".id");
                continue;
            }
            if (entry.tokenHash() != null) {
                String firstHash = hashes.putIfAbsent(entry.tokenHash().toString(), element.path());
                if (firstHash != null) {
                    element.get("token_hash").error("the same hash as " + firstHash
                            + ".token_hash (expected: one token per entry, so a token names one entry)");
                    continue;
                }
            }
            out.add(entry);
        }
        return out;
    }

    private static @Nullable BrokerEntry broker(ConfigNode node, boolean haveClientCa) {
        if (node.kind() != ConfigNode.Kind.MAP) {
            node.invalid("a map with id, role, token_hash, ...");
            return null;
        }
        ConfigNode idNode = node.get("id");
        String id = idNode.asStringOrNull();
        boolean ok = true;
        if (id == null || id.length() > 253 || !DNS_NAME.matcher(id).matches()) {
            if (id == null) {
                idNode.error("missing (expected: a lowercase DNS name such as broker-a.dynamo)");
            } else {
                idNode.invalid("a lowercase DNS name such as broker-a.dynamo (no wildcards)");
            }
            ok = false;
        }
        BusRole role = node.get("role").asChoice(BusRole.BROKER, t -> BusRole.fromLabel(t).orElse(null),
                "broker or kv_listener");
        ConfigNode clientIdNode = node.get("client_id");
        String clientId = clientIdNode.asStringOrNull();
        if (clientId != null && !CLIENT_ID.matcher(clientId).matches()) {
            clientIdNode.invalid("1..128 characters of A-Z a-z 0-9 . _ -");
            ok = false;
        }
        if (node.get("token").isPresent()) {
            node.get("token").error("a plaintext token is never configured (expected: token_hash: \"sha256:<64 hex>\","
                    + " the output of printf %s \"$TOKEN\" | sha256sum)");
            ok = false;
        }
        ConfigNode hashNode = node.get("token_hash");
        TokenHash hash = null;
        String hashText = hashNode.asStringOrNull();
        if (hashText != null) {
            hash = TokenHash.parse(hashText.trim()).orElse(null);
            if (hash == null) {
                // Never echo the value: someone may have pasted the token itself here.
                hashNode.error("not a token hash (expected: sha256: followed by 64 lowercase hex digits)");
                ok = false;
            }
        } else if (!haveClientCa) {
            hashNode.error("missing (expected: a token_hash, or tls.client_ca so the entry can use a certificate)");
            ok = false;
        }
        List<String> namespaces = names(node.get("namespaces"), NAMESPACE, MAX_NAMESPACES,
                "a Dynamo namespace: 1..63 characters of A-Z a-z 0-9 . _ -");
        List<String> backends = names(node.get("backends"), null, MAX_BACKENDS, "a backend name (1..128 bytes)");
        if (role == BusRole.BROKER && node.get("backends").isPresent()) {
            node.get("backends").error("set on role broker (expected: only on role kv_listener)");
            ok = false;
        }
        if (role == BusRole.KV_LISTENER) {
            if (node.get("namespaces").isPresent()) {
                node.get("namespaces").error("set on role kv_listener (expected: backends instead)");
                ok = false;
            }
            if (backends.isEmpty()) {
                node.get("backends").error("missing (expected: at least one backend this kv_listener may announce)");
                ok = false;
            }
        } else if (namespaces.isEmpty() && ok) {
            node.get("namespaces").warning("empty: this broker may declare any Dynamo namespace");
        }
        if (!ok || id == null) {
            return null;
        }
        return new BrokerEntry(id, role, clientId == null ? id : clientId, hash, namespaces, backends);
    }

    private static List<String> names(ConfigNode node, @Nullable Pattern pattern, int max, String expectation) {
        if (!node.isPresent()) {
            return List.of();
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of names");
            return List.of();
        }
        List<ConfigNode> elements = node.elements();
        if (elements.size() > max) {
            node.error(elements.size() + " entries (expected: at most " + max + ")");
            return List.of();
        }
        Set<String> seen = new HashSet<>();
        List<String> out = new ArrayList<>();
        for (ConfigNode element : elements) {
            String text = element.asStringOrNull();
            boolean valid = text != null && !text.isEmpty() && text.length() <= MAX_NAME_BYTES
                    && (pattern == null || pattern.matcher(text).matches());
            if (!valid) {
                element.invalid(expectation);
            } else if (!seen.add(text)) {
                element.invalid("each name once");
            } else {
                out.add(text);
            }
        }
        return out;
    }

    /** The listener must not share a port with the HTTP server: one would fail to bind, or worse, take the other's traffic. */
    @Override
    public void crossCheck(EventBusConfig value, RouterConfig config, Problems problems) {
        if (!value.enabled()) {
            return;
        }
        List<BindAddress> binds = config.server().bindAddresses();
        for (int i = 0; i < binds.size(); i++) {
            if (binds.get(i) instanceof BindAddress.Tcp tcp && collides(value.listen(), tcp)) {
                String path = binds.size() == 1 ? "server.bind_address" : "server.bind_address[" + i + "]";
                problems.error("dynamo.event_bus.listen", Problems.render(value.listen().toString())
                        + " collides with " + path + " " + Problems.render(tcp.toString())
                        + " (expected: a port of its own)");
            }
        }
    }

    public static boolean collides(BindAddress.Tcp a, BindAddress.Tcp b) {
        if (a.port() == 0 || a.port() != b.port()) {
            return false;
        }
        return a.host().equals(b.host()) || wildcard(a.host()) || wildcard(b.host());
    }

    private static boolean wildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("*");
    }

    /**
     * Credentials, grants, limits and TLS files apply to the next request or connection (live sessions that
     * lose their credential or grant end; a new client CA starts a new CA generation); the address or the
     * switch restart the listener.
     */
    @Override
    public ReloadClass reloadClass(EventBusConfig before, EventBusConfig after) {
        boolean restart = before.enabled() != after.enabled() || !before.listen().equals(after.listen());
        return restart ? ReloadClass.RESTART_SUBSYSTEM : ReloadClass.IMMEDIATE;
    }
}
