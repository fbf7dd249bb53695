package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.Secret;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** {@code dynamo.discovery.etcd}: endpoints, namespaces, TLS, authentication and the watch backoff. */
final class EtcdBinder {
    private EtcdBinder() {
    }

    static EtcdConfig bind(ConfigNode etcd) {
        ConfigNode endpointsNode = etcd.get("endpoints");
        List<String> endpoints = new ArrayList<>();
        boolean http = false;
        boolean https = false;
        List<ConfigNode> elements = endpointsNode.elements();
        if (elements.size() > DiscoverySection.MAX_ENDPOINTS) {
            endpointsNode.error(elements.size() + " endpoints (expected: at most " + DiscoverySection.MAX_ENDPOINTS
                    + ")");
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
                // Shown through the backend-URL masker: a user:password@ must not reach a log line.
                element.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: " + invalid.expectation() + ")");
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

        NamespaceList namespaces = NamespaceList.bindStoreKeys(etcd);
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
        BackoffConfig backoff = BackoffBinder.bind(etcd.get("watch_reconnect_backoff"));
        return new EtcdConfig(endpoints, namespaces.one(), namespaces.several(), tls, auth, backoff);
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
        return valid && username != null && password != null ? new EtcdAuthConfig(username, password) : null;
    }
}
