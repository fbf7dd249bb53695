package dev.continuum.router.eventplane.nats;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.Secret;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.nats}: binds and validates the connection block with field paths, like
 * {@code dynamo.discovery.etcd}. Every change is applied at once: {@link NatsConnection#apply} opens a
 * connection under the new settings, moves the subscriptions onto it and closes the old one.
 */
public final class NatsSection implements DynamoSection<NatsConfig> {
    public static final int MAX_SERVERS = 16;

    @Override
    public String key() {
        return "nats";
    }

    @Override
    public Class<NatsConfig> type() {
        return NatsConfig.class;
    }

    @Override
    public NatsConfig defaults() {
        return NatsConfig.DEFAULTS;
    }

    @Override
    public @Nullable NatsConfig bind(ConfigNode node, Problems problems) {
        if (node.isPresent() && node.kind() != ConfigNode.Kind.MAP) {
            node.invalid("a map with servers, tls, auth, connect_timeout and reconnect_wait");
            return NatsConfig.DEFAULTS;
        }
        ConfigNode serversNode = node.get("servers");
        List<ConfigNode> elements = serversNode.elements();
        if (elements.size() > MAX_SERVERS) {
            serversNode.error(elements.size() + " servers (expected: at most " + MAX_SERVERS + ")");
        }
        List<String> servers = new ArrayList<>();
        boolean tlsScheme = false;
        for (ConfigNode element : elements) {
            String text = element.asStringOrNull();
            if (text == null) {
                if (element.kind() == ConfigNode.Kind.NULL) {
                    element.invalid("a nats://host:port or tls://host:port URL");
                }
                continue;
            }
            String server = server(text);
            if (server == null) {
                // Shown masked: a user:password@ in a URL must not reach a log line.
                element.error(Problems.render(Problems.maskUserInfo(text))
                        + " (expected: nats://host:port or tls://host:port, credentials in dynamo.nats.auth)");
            } else {
                servers.add(server);
                tlsScheme |= server.startsWith("tls://");
            }
        }
        NatsTlsConfig tls = bindTls(node.get("tls"));
        NatsAuthConfig auth = bindAuth(node.get("auth"));
        if (auth != null && tls == null && !tlsScheme && !servers.isEmpty()) {
            node.get("auth").warning("credentials over plaintext nats:// without tls: a token or password "
                    + "travels in cleartext");
        }
        Duration connectTimeout = node.get("connect_timeout").asDuration(NatsConfig.DEFAULT_CONNECT_TIMEOUT,
                Duration.ofMillis(100), Duration.ofMinutes(1));
        Duration reconnectWait = node.get("reconnect_wait").asDuration(NatsConfig.DEFAULT_RECONNECT_WAIT,
                Duration.ofMillis(10), Duration.ofMinutes(1));
        return new NatsConfig(servers, tls, auth, connectTimeout, reconnectWait, bindJetStream(node.get("jetstream")));
    }

    /** JetStream stream and consumer names: what nats-server accepts in a subject token, kept short. */
    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,32}");

    private static @Nullable NatsJetStreamConfig bindJetStream(ConfigNode js) {
        if (!js.isPresent()) {
            return null;
        }
        if (js.kind() != ConfigNode.Kind.MAP) {
            js.invalid("a map with kv_events_stream, consumer_prefix and ack_wait");
            return null;
        }
        String stream = name(js.get("kv_events_stream"));
        String prefix = name(js.get("consumer_prefix"));
        Duration ackWait = js.get("ack_wait").asDuration(NatsJetStreamConfig.DEFAULT_ACK_WAIT,
                NatsJetStreamConfig.MIN_ACK_WAIT, NatsJetStreamConfig.MAX_ACK_WAIT);
        return stream != null && prefix != null ? new NatsJetStreamConfig(stream, prefix, ackWait) : null;
    }

    private static @Nullable String name(ConfigNode node) {
        String text = node.asStringOrNull();
        if (text == null || !NAME.matcher(text).matches()) {
            if (text != null || node.kind() == ConfigNode.Kind.NULL || !node.isPresent()) {
                node.invalid("1 to 32 letters, digits, '_' or '-'");
            }
            return null;
        }
        return text;
    }

    /** Every change reconnects without a restart of anything else (see the class comment). */
    @Override
    public ReloadClass reloadClass(NatsConfig before, NatsConfig after) {
        return ReloadClass.IMMEDIATE;
    }

    /** The canonical URL, or null when {@code text} is not nats:// or tls:// with a host, a port and nothing else. */
    static @Nullable String server(String text) {
        try {
            URI uri = new URI(text);
            String scheme = uri.getScheme();
            if (!"nats".equals(scheme) && !"tls".equals(scheme)) {
                return null;
            }
            if (uri.getHost() == null || uri.getRawUserInfo() != null || uri.getPort() < 1 || uri.getPort() > 65_535
                    || !(uri.getRawPath() == null || uri.getRawPath().isEmpty()) || uri.getRawQuery() != null
                    || uri.getRawFragment() != null) {
                return null;
            }
            return scheme + "://" + uri.getHost() + ":" + uri.getPort();
        } catch (URISyntaxException e) {
            return null;
        }
    }

    private static @Nullable NatsTlsConfig bindTls(ConfigNode tls) {
        if (!tls.isPresent()) {
            return tls.kind() == ConfigNode.Kind.NULL ? new NatsTlsConfig(null, null, null) : null;
        }
        if (tls.kind() != ConfigNode.Kind.MAP) {
            tls.invalid("a map with ca_cert, client_cert and client_key");
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
        return new NatsTlsConfig(caCert, clientCert, clientKey);
    }

    private static @Nullable NatsAuthConfig bindAuth(ConfigNode auth) {
        if (!auth.isPresent()) {
            return null;
        }
        if (auth.kind() != ConfigNode.Kind.MAP) {
            auth.invalid("a map with one of token, username and password, nkey_seed or credentials_file");
            return null;
        }
        Secret token = nonEmptySecret(auth.get("token"));
        ConfigNode userNode = auth.get("username");
        String username = userNode.asStringOrNull();
        Secret password = nonEmptySecret(auth.get("password"));
        Secret nkeySeed = nonEmptySecret(auth.get("nkey_seed"));
        if (nkeySeed != null && !nkeySeed.reveal().startsWith("SU")) {
            auth.get("nkey_seed").error(Secret.MASK + " (expected: a user NKey seed, starting SU)");
            return null;
        }
        Path credentials = path(auth.get("credentials_file"));
        if (username != null && username.isEmpty()) {
            userNode.invalid("a non-empty username");
            username = null;
        }
        if ((username == null) != (password == null)) {
            (username == null ? userNode : auth.get("password"))
                    .error("missing (expected: username and password set together)");
            return null;
        }
        int ways = (token != null ? 1 : 0) + (username != null ? 1 : 0) + (nkeySeed != null ? 1 : 0)
                + (credentials != null ? 1 : 0);
        if (ways != 1) {
            auth.error(ways + " ways to authenticate (expected: exactly one of token, username and password, "
                    + "nkey_seed or credentials_file)");
            return null;
        }
        return new NatsAuthConfig(token, username, password, nkeySeed, credentials);
    }

    private static @Nullable Secret nonEmptySecret(ConfigNode node) {
        Secret s = node.asSecret();
        if (s != null && s.reveal().isEmpty()) {
            node.error("\"\" (expected: a non-empty value)");
            return null;
        }
        return s;
    }

    private static @Nullable Path path(ConfigNode node) {
        String text = node.asPathString();
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
}
