package dev.continuum.router.replicas;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.replicas}, bound and validated by {@link ReplicasSection}.
 *
 * @param enabled           whether this router shares its accounting with, and reads, its group's peers
 * @param group             the group name: a subject token shared by the replicas that route as one
 * @param replicaId         this replica's subject token, or null (a random one per process start)
 * @param heartbeatInterval how often a heartbeat is published (a peer silent for {@code peerTimeout} is dropped)
 * @param peerTimeout       how long a silent peer keeps its partition
 * @param batchInterval     how long events wait to share one message
 * @param maxBatchEvents    events per message at most (a full batch is sent at once)
 * @param maxMessageBytes   bytes per message at most, sent and accepted (snapshots are split into chunks of it)
 * @param maxPeers          peers followed at once; messages of more are dropped, counted
 * @param sessionTtl        how long a session stays bound to its decode rank after its last turn; zero: no affinity
 */
public record ReplicasConfig(boolean enabled, String group, @Nullable String replicaId, Duration heartbeatInterval,
                             Duration peerTimeout, Duration batchInterval, int maxBatchEvents, int maxMessageBytes,
                             int maxPeers, Duration sessionTtl) {
    public static final Duration DEFAULT_HEARTBEAT = Duration.ofMillis(500);
    public static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(1);
    public static final Duration DEFAULT_BATCH_INTERVAL = Duration.ofMillis(5);
    public static final int DEFAULT_MAX_BATCH_EVENTS = 256;
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
    public static final int DEFAULT_MAX_PEERS = 16;
    public static final Duration DEFAULT_SESSION_TTL = Duration.ofMinutes(10);

    public static final ReplicasConfig DEFAULTS = new ReplicasConfig(false, "default", null, DEFAULT_HEARTBEAT,
            DEFAULT_PEER_TIMEOUT, DEFAULT_BATCH_INTERVAL, DEFAULT_MAX_BATCH_EVENTS, DEFAULT_MAX_MESSAGE_BYTES,
            DEFAULT_MAX_PEERS, DEFAULT_SESSION_TTL);

    public ReplicasConfig {
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        Objects.requireNonNull(peerTimeout, "peerTimeout");
        Objects.requireNonNull(batchInterval, "batchInterval");
        Objects.requireNonNull(sessionTtl, "sessionTtl");
    }
}
