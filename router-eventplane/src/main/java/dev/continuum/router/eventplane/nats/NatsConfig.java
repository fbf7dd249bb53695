package dev.continuum.router.eventplane.nats;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.nats} (docs/nats.md): the process's one NATS connection. Without servers there is no connection
 * and event channels on the {@code Nats} transport stay pending.
 *
 * @param servers           {@code nats://} or {@code tls://} URLs; empty: NATS off
 * @param tls               TLS settings, or null (TLS only when a server URL says {@code tls://})
 * @param auth              how to authenticate, or null for none
 * @param connectTimeout    one connection attempt's bound
 * @param reconnectWait     the pause between reconnect attempts after a connection is lost
 * @param jetstream         where the fleet's kv-events are kept in JetStream, or null to read them from core NATS
 */
public record NatsConfig(List<String> servers, @Nullable NatsTlsConfig tls, @Nullable NatsAuthConfig auth,
                         Duration connectTimeout, Duration reconnectWait, @Nullable NatsJetStreamConfig jetstream) {
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_RECONNECT_WAIT = Duration.ofSeconds(1);
    public static final NatsConfig DEFAULTS = new NatsConfig(List.of(), null, null, DEFAULT_CONNECT_TIMEOUT,
            DEFAULT_RECONNECT_WAIT, null);

    public NatsConfig {
        servers = List.copyOf(servers);
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        Objects.requireNonNull(reconnectWait, "reconnectWait");
    }

    /** Core NATS only (no JetStream). */
    public NatsConfig(List<String> servers, @Nullable NatsTlsConfig tls, @Nullable NatsAuthConfig auth,
            Duration connectTimeout, Duration reconnectWait) {
        this(servers, tls, auth, connectTimeout, reconnectWait, null);
    }

    public boolean enabled() {
        return !servers.isEmpty();
    }
}
