package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.continuum.router.core.config.internal.ReadbackJson;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code server}: listeners, request limits and timeouts.
 *
 * @param bindAddresses         {@code bind_address}: one string or a list; default {@code 0.0.0.0:8080}
 * @param socketMode            {@code socket_mode}: permission bits for unix sockets ({@code 0o660}), or null
 * @param workers               {@code workers}: event-loop threads, 0 = one per core
 * @param connectionPoolSize    {@code connection_pool_size}: max idle upstream connections per backend (100)
 * @param maxRequestBodySize    {@code max_request_body_size}: larger bodies get 413 (default 10MiB)
 * @param maxHeaderSize         {@code max_header_size}: total request header bytes (default 16KiB); over it gets 431
 * @param maxInitialLineLength  {@code max_initial_line_length}: request line bytes (default 8KiB); over it gets 414
 * @param requestTimeout        {@code request_timeout}: default upstream timeout for a whole request (300s);
 *                              a backend's {@code timeout} overrides it; for a stream, the time to first byte
 * @param connectTimeout        {@code connect_timeout}: upstream TCP connect timeout (5s)
 * @param headerReadTimeout     {@code header_read_timeout}: a client must send its full request head within this (10s)
 * @param idleTimeout           {@code idle_timeout}: keep-alive connections idle longer are closed (60s)
 * @param shutdownGracePeriod   {@code shutdown_grace_period}: how long SIGTERM waits for in-flight requests (30s)
 * @param bodyReadTimeout       {@code body_read_timeout}: a client must send a whole request body within this,
 *                              counted from its head (60s); later gets 408
 * @param maxBufferedRequestSize {@code max_buffered_request_size}: request body bytes all connections together may
 *                              hold; over it new bodies get 503. Null: half the direct-memory limit, at least
 *                              {@code max_request_body_size}
 * @param maxConnections        {@code max_connections}: open client connections; one more is answered 503 (10000)
 * @param shutdownQuietPeriod   {@code shutdown_quiet_period}: at shutdown, how long {@code /health} answers 503 while
 *                              the listeners still accept, before they close; part of the grace period
 *                              (default 5s, at most the grace period)
 */
public record ServerConfig(
        @JsonProperty("bind_address") @JsonSerialize(using = ReadbackJson.OneOrListSerializer.class)
        List<BindAddress> bindAddresses,
        @JsonSerialize(using = ReadbackJson.FileModeSerializer.class) @Nullable Integer socketMode,
        int workers,
        int connectionPoolSize,
        ByteSize maxRequestBodySize,
        ByteSize maxHeaderSize,
        ByteSize maxInitialLineLength,
        Duration requestTimeout,
        Duration connectTimeout,
        Duration headerReadTimeout,
        Duration idleTimeout,
        Duration shutdownGracePeriod,
        Duration bodyReadTimeout,
        @Nullable ByteSize maxBufferedRequestSize,
        int maxConnections,
        Duration shutdownQuietPeriod) {
    public static final Duration DEFAULT_BODY_READ_TIMEOUT = Duration.ofSeconds(60);
    public static final int DEFAULT_MAX_CONNECTIONS = 10_000;
    public static final Duration DEFAULT_SHUTDOWN_QUIET_PERIOD = Duration.ofSeconds(5);

    public ServerConfig {
        bindAddresses = List.copyOf(bindAddresses);
    }

    /** The ingress bounds at their defaults; the quiet period at most {@code shutdownGracePeriod}. */
    public ServerConfig(List<BindAddress> bindAddresses, @Nullable Integer socketMode, int workers,
                        int connectionPoolSize, ByteSize maxRequestBodySize, ByteSize maxHeaderSize,
                        ByteSize maxInitialLineLength, Duration requestTimeout, Duration connectTimeout,
                        Duration headerReadTimeout, Duration idleTimeout, Duration shutdownGracePeriod) {
        this(bindAddresses, socketMode, workers, connectionPoolSize, maxRequestBodySize, maxHeaderSize,
                maxInitialLineLength, requestTimeout, connectTimeout, headerReadTimeout, idleTimeout,
                shutdownGracePeriod, DEFAULT_BODY_READ_TIMEOUT, null, DEFAULT_MAX_CONNECTIONS,
                defaultQuietPeriod(shutdownGracePeriod));
    }

    /** The default quiet period, shortened to fit a shorter grace period. */
    public static Duration defaultQuietPeriod(Duration grace) {
        return grace.compareTo(DEFAULT_SHUTDOWN_QUIET_PERIOD) < 0 ? grace : DEFAULT_SHUTDOWN_QUIET_PERIOD;
    }

    public static ServerConfig defaults() {
        return new ServerConfig(
                List.of(new BindAddress.Tcp("0.0.0.0", 8080)),
                null,
                0,
                100,
                ByteSize.ofMiB(10),
                ByteSize.ofKiB(16),
                ByteSize.ofKiB(8),
                Duration.ofSeconds(300),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(60),
                Duration.ofSeconds(30));
    }

    public ServerConfig withBindAddresses(List<BindAddress> addresses) {
        return new ServerConfig(addresses, socketMode, workers, connectionPoolSize, maxRequestBodySize,
                maxHeaderSize, maxInitialLineLength, requestTimeout, connectTimeout, headerReadTimeout,
                idleTimeout, shutdownGracePeriod, bodyReadTimeout, maxBufferedRequestSize, maxConnections,
                shutdownQuietPeriod);
    }
}
