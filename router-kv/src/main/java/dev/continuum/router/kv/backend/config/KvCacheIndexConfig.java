package dev.continuum.router.kv.backend.config;

import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.config.BackendTrust;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonValue;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.kv_cache_index}: which backends' SSE KV-event streams feed the backend KV cache index, and how
 * the router reaches each one (docs/kv-routing.md, "The backend KV cache index").
 *
 * @param sources              one entry per backend, at most {@link #MAX_SOURCES}
 * @param maxBlocksPerBackend  blocks the index keeps per backend; a stored event beyond it is dropped and counted
 * @param maxEventBytes        the largest SSE event (all its lines) the parser accepts; a larger one is dropped
 */
public record KvCacheIndexConfig(@JsonInclude(JsonInclude.Include.NON_EMPTY) List<Source> sources,
                                 int maxBlocksPerBackend, int maxEventBytes) {
    public static final int MAX_SOURCES = 256;
    public static final KvCacheIndexConfig DEFAULTS = new KvCacheIndexConfig(List.of(), 262_144, 65_536);

    public KvCacheIndexConfig {
        sources = List.copyOf(sources);
    }

    /** How the router reads a backend's stream. */
    public enum Transport {
        /** The router dials the backend's {@code url} itself. */
        DIRECT,
        /** A kv-listener in the cluster relays it over the event bus ({@code EventBus.openAnnouncedStream}). */
        EVENT_BUS;

        @JsonValue
        public String yamlName() {
            return this == DIRECT ? "direct" : "event_bus";
        }
    }

    /**
     * One backend's KV-event stream.
     *
     * @param backend   a {@code backends[].name}
     * @param transport {@code direct} or {@code event_bus}
     * @param url       {@code direct}: the stream's {@code http://} or {@code https://} URL; null for
     *                  {@code event_bus} (the kv-listener's file has the URL)
     * @param tls       {@code direct} over {@code https} only: what verifies the backend's certificate (null: the
     *                  JDK's trust store)
     */
    public record Source(String backend, Transport transport, @Nullable URI url, @Nullable Tls tls) {
        public Source {
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(transport, "transport");
            if ((transport == Transport.DIRECT) != (url != null)) {
                throw new IllegalArgumentException("url: required for direct, absent for event_bus");
            }
            if (tls != null && (url == null || !"https".equals(url.getScheme()))) {
                throw new IllegalArgumentException("tls: only for an https url");
            }
        }

        /** A source without a {@code tls} block. */
        public Source(String backend, Transport transport, @Nullable URI url) {
            this(backend, transport, url, null);
        }
    }

    /**
     * {@code sources[].tls}, named as {@code dynamo.discovery.etcd.tls} names its trust.
     *
     * @param caCert the CA bundle that replaces the JDK's trust store for this stream (null: the JDK's)
     */
    public record Tls(@Nullable BackendTrust caCert) {
    }
}
