package dev.continuum.router.agents;

import dev.continuum.router.core.config.ConfigDocument;
import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.config.DiscoveryConfig;
import dev.continuum.router.discovery.config.DiscoverySection;
import dev.continuum.router.eventbus.config.EventBusSection;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The event broker's configuration file (docs/event-bus.md has the annotated example):
 *
 * <pre>
 * bus:
 *   url: https://router.example.com:7443       # the router's dynamo.event_bus.listen, as the cluster reaches it
 *   client_id: broker-a                         # the brokers[] entry's client_id
 *   token_file: /var/run/secrets/continuum-bus/token   # and/or tls.cert + tls.key
 *   tls: {ca: ..., cert: ..., key: ...}
 *   drain_timeout: 10s
 * discovery:                                    # the router's dynamo.discovery schema, source kubernetes
 *   source: kubernetes
 *   kubernetes: {namespace: dynamo-workers, dynamo_namespaces: [dynamo]}
 * </pre>
 *
 * Every problem names its field path; the token itself is never echoed.
 *
 * @param agent     how to reach and authenticate to the bus
 * @param discovery the DynamoWorkerMetadata source whose publishers the broker may relay
 */
public record EventBrokerConfig(AgentSettings agent, DiscoveryConfig discovery) {
    private static final int MAX_TOKEN_BYTES = 4096;

    /** A loaded file: the config, or every problem found. */
    public record Result(@Nullable EventBrokerConfig config, List<Problem> problems) {
    }

    public static Result load(Path file, Map<String, String> environment) {
        Problems problems = new Problems();
        ConfigDocument document = ConfigDocument.read(file, environment, problems);
        if (document == null) {
            return new Result(null, problems.all());
        }
        EventBrokerConfig config = bind(document.root(), problems, environment);
        document.reportUnknownKeys();
        return new Result(problems.hasErrors() ? null : config, problems.all());
    }

    static @Nullable EventBrokerConfig bind(ConfigNode root, Problems problems, Map<String, String> environment) {
        BusPart bus = bus(root.get("bus"), "this broker's");
        ConfigNode discoveryNode = root.get("discovery");
        DiscoveryConfig discovery = DiscoverySection.create(environment).bind(discoveryNode, problems);
        if (discovery.source() != DiscoverySourceKind.KUBERNETES) {
            discoveryNode.get("source").error(renderSource(discovery.source())
                    + " (expected: kubernetes; the broker relays what DynamoWorkerMetadata advertises)");
        }
        List<String> namespaces = discovery.kubernetes().effectiveDynamoNamespaces();
        for (String ns : namespaces) {
            if (!EventBusSection.NAMESPACE.matcher(ns).matches()) {
                discoveryNode.get("kubernetes").error("Dynamo namespace " + Problems.render(ns)
                        + " (expected: 1..63 of A-Z a-z 0-9 . _ -, as hello may declare it)");
            }
        }
        if (problems.hasErrors() || bus == null) {
            return null;
        }
        return new EventBrokerConfig(bus.settings(namespaces), discovery);
    }

    /**
     * The {@code bus} block both agents share (the event broker's and the kv-listener's files): where the
     * router's listener is and how to authenticate. Null when a required part is missing or invalid.
     */
    public record BusPart(URI url, String clientId, @Nullable String token, @Nullable Path cert, @Nullable Path key,
                   @Nullable Path ca, Duration drainTimeout) {
        AgentSettings settings(List<String> namespaces) {
            int port = url.getPort() == -1 ? 443 : url.getPort();
            return new AgentSettings(url.getHost(), port, token, cert, key, ca, clientId, namespaces,
                    AgentSettings.CONNECT_BUDGET, drainTimeout);
        }
    }

    /** Binds {@code bus}; {@code whose} names the agent in messages ("this broker's", "this kv-listener's"). */
    static @Nullable BusPart bus(ConfigNode bus, String whose) {
        if (!bus.isPresent()) {
            bus.error("missing (expected: url, client_id and a token_file or tls.cert/tls.key)");
        }
        URI url = url(bus.get("url"));
        ConfigNode clientIdNode = bus.get("client_id");
        String clientId = clientIdNode.asStringOrNull();
        if (clientId == null) {
            clientIdNode.error("missing (expected: the client_id of " + whose + " dynamo.event_bus.brokers entry)");
        } else if (!EventBusSection.CLIENT_ID.matcher(clientId).matches()) {
            clientIdNode.invalid("1..128 characters of A-Z a-z 0-9 . _ -");
            clientId = null;
        }
        String token = token(bus.get("token_file"));
        ConfigNode tls = bus.get("tls");
        Path ca = path(tls.get("ca"));
        Path cert = path(tls.get("cert"));
        Path key = path(tls.get("key"));
        if ((cert == null) != (key == null)) {
            (cert == null ? tls.get("cert") : tls.get("key")).error("missing (expected: tls.cert and tls.key together)");
        }
        if (token == null && cert == null && !bus.get("token_file").isPresent()) {
            bus.get("token_file").error("missing (expected: a token_file, or tls.cert and tls.key)");
        }
        Duration drain = bus.get("drain_timeout").asDuration(AgentSettings.DRAIN_TIMEOUT, Duration.ofSeconds(1),
                Duration.ofMinutes(10));
        if (url == null || clientId == null || (token == null && cert == null)) {
            return null;
        }
        return new BusPart(url, clientId, token, cert, key, ca, drain);
    }

    private static String renderSource(DiscoverySourceKind kind) {
        return Problems.render(kind.name().toLowerCase(java.util.Locale.ROOT));
    }

    private static @Nullable URI url(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            node.error("missing (expected: https://host:port of the router's event bus listener)");
            return null;
        }
        try {
            URI uri = new URI(text.trim());
            if (!"https".equals(uri.getScheme()) || uri.getHost() == null || uri.getRawUserInfo() != null
                    || (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/"))
                    || uri.getRawQuery() != null || uri.getRawFragment() != null) {
                node.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: https://host:port, no "
                        + "credentials, path or query; the bus speaks TLS only)");
                return null;
            }
            return uri;
        } catch (URISyntaxException e) {
            node.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: https://host:port)");
            return null;
        }
    }

    private static @Nullable Path path(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            return null;
        }
        Path p = Path.of(text);
        if (!Files.isReadable(p)) {
            node.error(Problems.render(text) + " (expected: a readable PEM file)");
            return null;
        }
        return p;
    }

    /** The token file's first line; never echoed. */
    private static @Nullable String token(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null) {
            return null;
        }
        try {
            Path p = Path.of(text);
            if (Files.size(p) > MAX_TOKEN_BYTES) {
                node.error(Problems.render(text) + " (expected: a token file of at most " + MAX_TOKEN_BYTES + " bytes)");
                return null;
            }
            String token = Files.readString(p, StandardCharsets.UTF_8).strip();
            if (token.isEmpty() || token.chars().anyMatch(c -> c <= ' ' || c >= 0x7f)) {
                node.error(Problems.render(text) + " (expected: one token of visible ASCII characters)");
                return null;
            }
            return token;
        } catch (IOException e) {
            node.error(Problems.render(text) + " (expected: a readable token file)");
            return null;
        }
    }
}
