package dev.continuum.router.eventbus.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One {@code dynamo.event_bus.brokers[]} entry: one credential and what it is allowed to do.
 *
 * @param id         lowercase DNS name; also the DNS SAN a client certificate must carry
 * @param role       {@code broker} (default) or {@code kv_listener}
 * @param clientId   what {@code hello.client_id} must say (default: the id); the rendezvous hash uses it
 * @param tokenHash  the token's digest, or null when the entry authenticates by certificate only
 * @param namespaces {@code broker}: the Dynamo namespaces it may declare; empty allows any
 * @param backends   {@code kv_listener}: the backends it may announce (at least one)
 */
public record BrokerEntry(String id, BusRole role, String clientId, @Nullable TokenHash tokenHash,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> namespaces,
                          @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> backends) {
    public BrokerEntry {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(clientId, "clientId");
        namespaces = List.copyOf(namespaces);
        backends = List.copyOf(backends);
    }

    /** Whether a broker may declare {@code namespace}. */
    public boolean allowsNamespace(String namespace) {
        return namespaces.isEmpty() || namespaces.contains(namespace);
    }
}
