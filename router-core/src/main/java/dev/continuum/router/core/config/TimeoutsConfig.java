package dev.continuum.router.core.config;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * {@code timeouts}: the Rust router's per-phase upstream timeouts. Every value is optional; an unset one
 * falls back to the {@code server} key that already covers it (documented per accessor), so a config
 * without this section behaves exactly as before.
 *
 * @param connection {@code connection}: the upstream TCP (and TLS) connect timeout; else {@code server.connect_timeout}
 * @param request    {@code request.standard} and {@code request.streaming}
 */
public record TimeoutsConfig(@Nullable Duration connection, Request request) {

    /** {@code request}: one phase set for plain requests, one for streams. */
    public record Request(Phase standard, Phase streaming) {
    }

    /**
     * @param firstByte     the response head must arrive within this of the attempt's start
     * @param total         the whole answer must be relayed within this of the attempt's start
     * @param chunkInterval streams only: the longest silence between two chunks once the head went out
     */
    public record Phase(@Nullable Duration firstByte, @Nullable Duration total, @Nullable Duration chunkInterval) {
        static final Phase UNSET = new Phase(null, null, null);
    }

    public static TimeoutsConfig defaults() {
        return new TimeoutsConfig(null, new Request(Phase.UNSET, Phase.UNSET));
    }

    public Duration connect(ServerConfig server) {
        return connection != null ? connection : server.connectTimeout();
    }

    /**
     * How long an attempt may wait for its response head. A stream: {@code streaming.first_byte}, else the
     * backend's {@code timeout}, else {@code server.request_timeout}. A plain request: {@code standard.first_byte}
     * when set, else its whole-request timeout ({@link #total}).
     */
    public Duration firstByte(boolean stream, BackendConfig backend, ServerConfig server) {
        if (stream) {
            Duration d = request.streaming().firstByte();
            return d != null ? d : backend.effectiveTimeout(server);
        }
        Duration d = request.standard().firstByte();
        Duration total = standardTotal(backend, server);
        return d != null && d.compareTo(total) < 0 ? d : total;
    }

    /**
     * The whole attempt's bound, or null for none. A plain request: the backend's {@code timeout}, else
     * {@code standard.total}, else {@code server.request_timeout}. A stream: {@code streaming.total}, else none
     * (a long generation keeps streaming as long as chunks keep coming).
     */
    public @Nullable Duration total(boolean stream, BackendConfig backend, ServerConfig server) {
        return stream ? request.streaming().total() : standardTotal(backend, server);
    }

    private Duration standardTotal(BackendConfig backend, ServerConfig server) {
        Duration own = backend.timeout();
        if (own != null) {
            return own;
        }
        Duration d = request.standard().total();
        return d != null ? d : server.requestTimeout();
    }

    /** The longest silence between two chunks of a relayed stream, or null: {@code server.idle_timeout} governs. */
    public @Nullable Duration chunkInterval() {
        return request.streaming().chunkInterval();
    }
}
