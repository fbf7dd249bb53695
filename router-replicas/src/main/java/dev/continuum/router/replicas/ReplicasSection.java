package dev.continuum.router.replicas;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.replicas}: binds and validates replica sync with field paths. Every change applies at once
 * ({@link ReplicaSync#apply}): a new group or replica ID leaves the old group (peers drop this replica's part within
 * their peer timeout) and joins the new one with fresh snapshots; timing and bounds apply from the next tick.
 */
public final class ReplicasSection implements DynamoSection<ReplicasConfig> {
    /** A group or replica ID is one NATS subject token: no dots, wildcards or spaces. */
    static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    /** Smallest message bound: room for a header and one event with its longest strings. */
    static final int MIN_MESSAGE_BYTES = 4 * 1024;
    /** Largest message bound: nats-server's default {@code max_payload}. */
    static final int MAX_MESSAGE_BYTES = 1024 * 1024;

    @Override
    public String key() {
        return "replicas";
    }

    @Override
    public Class<ReplicasConfig> type() {
        return ReplicasConfig.class;
    }

    @Override
    public ReplicasConfig defaults() {
        return ReplicasConfig.DEFAULTS;
    }

    @Override
    public @Nullable ReplicasConfig bind(ConfigNode node, Problems problems) {
        if (node.isPresent() && node.kind() != ConfigNode.Kind.MAP) {
            node.invalid("a map with enabled, group, replica_id, heartbeat_interval, peer_timeout, batch_interval, "
                    + "max_batch_events, max_message_bytes, max_peers and session_ttl");
            return ReplicasConfig.DEFAULTS;
        }
        ReplicasConfig d = ReplicasConfig.DEFAULTS;
        boolean enabled = node.get("enabled").asBool(d.enabled());
        String group = Objects.requireNonNullElse(token(node.get("group"), d.group()), d.group());
        String replicaId = node.get("replica_id").isPresent() ? token(node.get("replica_id"), null) : null;
        Duration heartbeat = node.get("heartbeat_interval").asDuration(d.heartbeatInterval(), Duration.ofMillis(50),
                Duration.ofSeconds(30));
        ConfigNode timeoutNode = node.get("peer_timeout");
        Duration timeout = timeoutNode.asDuration(d.peerTimeout(), Duration.ofMillis(100), Duration.ofMinutes(5));
        if (timeout.compareTo(heartbeat) <= 0) {
            timeoutNode.error(timeout + " (expected: longer than heartbeat_interval " + heartbeat
                    + ", two heartbeats recommended)");
        }
        Duration batch = node.get("batch_interval").asDuration(d.batchInterval(), Duration.ofMillis(1),
                Duration.ofMillis(100));
        int maxEvents = node.get("max_batch_events").asInt(d.maxBatchEvents(), 1, SyncCodec.MAX_EVENTS);
        int maxBytes = node.get("max_message_bytes").asInt(d.maxMessageBytes(), MIN_MESSAGE_BYTES,
                MAX_MESSAGE_BYTES);
        int maxPeers = node.get("max_peers").asInt(d.maxPeers(), 1, 256);
        Duration sessionTtl = node.get("session_ttl").asDuration(d.sessionTtl(), Duration.ZERO, Duration.ofDays(1));
        return new ReplicasConfig(enabled, group, replicaId, heartbeat, timeout, batch, maxEvents, maxBytes, maxPeers,
                sessionTtl);
    }

    private static @Nullable String token(ConfigNode node, @Nullable String defaultValue) {
        if (!node.isPresent()) {
            return defaultValue;
        }
        String text = node.asStringOrNull();
        if (text == null || !TOKEN.matcher(text).matches()) {
            node.invalid("1 to 64 letters, digits, '_' or '-' (one NATS subject token)");
            return defaultValue;
        }
        return text;
    }

    @Override
    public ReloadClass reloadClass(ReplicasConfig before, ReplicasConfig after) {
        return ReloadClass.IMMEDIATE;
    }
}
