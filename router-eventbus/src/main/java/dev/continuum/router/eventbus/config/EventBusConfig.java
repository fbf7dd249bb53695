package dev.continuum.router.eventbus.config;

import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.continuum.router.core.config.BindAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.event_bus}. Byte bounds derive from two numbers (docs/event-bus-protocol.md, section 1):
 * each stream's per-direction buffer is {@code max_session_buffer_bytes / (4 * max_streams_per_session)}
 * clamped to 16 KiB..1 MiB, and the HTTP/2 connection window is {@code max_session_buffer_bytes}.
 *
 * @param enabled               whether the listener runs
 * @param listen                its own TCP address (never one of {@code server.bind_address})
 * @param tls                   certificate, key and optional client CA; null only while disabled
 * @param brokers               the credentials that may connect
 * @param maxSessions           welcomed sessions router-wide (1..4096, default 64)
 * @param maxStreamsPerSession  data streams per session (1..65536, default 1024)
 * @param maxSessionBufferBytes bytes one session may make the router hold (default 64 MiB, at most 2^31-1)
 * @param heartbeatInterval     how often the router sends {@code heartbeat} (1s..5m, default 10s)
 * @param idleTimeout           silence after which a session ends (2s..1h, default 30s, above the heartbeat)
 */
public record EventBusConfig(boolean enabled, @JsonSerialize(using = ToStringSerializer.class) BindAddress.Tcp listen,
                             @Nullable BusTls tls,
                             List<BrokerEntry> brokers, int maxSessions, int maxStreamsPerSession,
                             long maxSessionBufferBytes, Duration heartbeatInterval, Duration idleTimeout) {
    public static final String DEFAULT_LISTEN = "0.0.0.0:7443";
    public static final int DEFAULT_MAX_SESSIONS = 64;
    public static final int MAX_MAX_SESSIONS = 4096;
    public static final int DEFAULT_MAX_STREAMS_PER_SESSION = 1024;
    public static final int MAX_MAX_STREAMS_PER_SESSION = 65536;
    public static final long DEFAULT_MAX_SESSION_BUFFER_BYTES = 64L << 20;
    /** The largest HTTP/2 flow-control window (RFC 9113, section 6.9.1). */
    public static final long MAX_MAX_SESSION_BUFFER_BYTES = Integer.MAX_VALUE;
    /** Each stream needs four reservations of at least 16 KiB. */
    public static final long MIN_BUFFER_PER_STREAM = 64L << 10;
    public static final int MIN_STREAM_BUFFER = 16 << 10;
    public static final int MAX_STREAM_BUFFER = 1 << 20;
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(10);
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
    public static final int MAX_BROKERS = 256;

    public static final EventBusConfig DEFAULTS = new EventBusConfig(false, new BindAddress.Tcp("0.0.0.0", 7443),
            null, List.of(), DEFAULT_MAX_SESSIONS, DEFAULT_MAX_STREAMS_PER_SESSION, DEFAULT_MAX_SESSION_BUFFER_BYTES,
            DEFAULT_HEARTBEAT_INTERVAL, DEFAULT_IDLE_TIMEOUT);

    public EventBusConfig {
        Objects.requireNonNull(listen, "listen");
        brokers = List.copyOf(brokers);
        Objects.requireNonNull(heartbeatInterval, "heartbeatInterval");
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        if (enabled && tls == null) {
            throw new IllegalArgumentException("tls: null (expected: certificate and key while enabled)");
        }
    }

    /** Each stream's per-direction buffer: the HTTP/2 initial stream window the listener advertises. */
    public int streamBufferBytes() {
        long share = maxSessionBufferBytes / (4L * maxStreamsPerSession);
        return (int) Math.max(MIN_STREAM_BUFFER, Math.min(MAX_STREAM_BUFFER, share));
    }

    /** TCP connections the listener accepts at once: four per session slot, never fewer than 16. */
    public int maxConnections() {
        return Math.max(16, 4 * maxSessions);
    }

    public Optional<BrokerEntry> broker(String id) {
        return brokers.stream().filter(b -> b.id().equals(id)).findFirst();
    }
}
