package dev.continuum.router.agents;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What an event-broker agent needs to dial the router's bus (docs/event-bus.md, "The event broker").
 *
 * @param host           the bus listener's host (from {@code bus_url})
 * @param port           its port
 * @param token          the bearer token, or null to authenticate with the client certificate alone
 * @param clientCert     a PEM client certificate whose DNS SAN is the broker entry's id, or null
 * @param clientKey      its PEM PKCS#8 key, or null
 * @param trustedCa      PEM CA certificates that sign the router's certificate; null trusts the JDK's roots
 * @param clientId       {@code hello.client_id}, the entry's {@code client_id}
 * @param namespaces     the Dynamo namespaces this agent declares (1..16)
 * @param connectBudget  resolution plus TCP connect to one publisher
 * @param drainTimeout   how long a drain waits for the router to take its streams away
 */
public record AgentSettings(String host, int port, @Nullable String token, @Nullable Path clientCert,
                            @Nullable Path clientKey, @Nullable Path trustedCa, String clientId,
                            List<String> namespaces, Duration connectBudget, Duration drainTimeout) {
    /** The publisher connect budget, the same as the router's direct dial. */
    public static final Duration CONNECT_BUDGET = Duration.ofSeconds(10);
    public static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    public AgentSettings {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(clientId, "clientId");
        namespaces = List.copyOf(namespaces);
        if (token == null && clientCert == null) {
            throw new IllegalArgumentException("credentials: none (expected: a token or a client certificate)");
        }
        if ((clientCert == null) != (clientKey == null)) {
            throw new IllegalArgumentException("client certificate: cert and key (expected: both or neither)");
        }
    }
}
