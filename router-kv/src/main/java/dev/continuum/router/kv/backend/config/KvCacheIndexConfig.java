package dev.continuum.router.kv.backend.config;

import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.config.BackendTrust;
import dev.continuum.router.eventplane.zmtp.ZmtpEndpoint;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.annotation.JsonValue;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.kv_cache_index}: which backends' KV-event streams (SSE, or the engine's own ZMQ) feed the backend
 * KV cache index, and how the router reaches each one (docs/kv-routing.md, "The backend KV cache index").
 *
 * @param sources              one entry per backend, at most {@link #MAX_SOURCES}
 * @param maxBlocksPerBackend  blocks the index keeps per backend; a stored event beyond it is dropped and counted
 * @param maxEventBytes        the largest SSE event (all its lines), or msgpack batch of a zmq source, accepted; a
 *                             larger one is dropped
 * @param selection            whether and for which models the index steers {@code backends[]} selection
 */
public record KvCacheIndexConfig(@JsonInclude(JsonInclude.Include.NON_EMPTY) List<Source> sources,
                                 int maxBlocksPerBackend, int maxEventBytes, BackendSelectionConfig selection) {
    public static final int MAX_SOURCES = 256;
    public static final KvCacheIndexConfig DEFAULTS = new KvCacheIndexConfig(List.of(), 262_144, 65_536);

    public KvCacheIndexConfig {
        sources = List.copyOf(sources);
        Objects.requireNonNull(selection, "selection");
    }

    /** Without selection models (selection on, steering nothing until a model is listed). */
    public KvCacheIndexConfig(List<Source> sources, int maxBlocksPerBackend, int maxEventBytes) {
        this(sources, maxBlocksPerBackend, maxEventBytes, BackendSelectionConfig.DEFAULTS);
    }

    /** How the router reads a backend's stream. */
    public enum Transport {
        /** The router dials the backend's {@code url} itself. */
        DIRECT,
        /** A kv-listener in the cluster relays it over the event bus ({@code EventBus.openAnnouncedStream}). */
        EVENT_BUS,
        /** The engine's own ZMQ PUB socket (vLLM or SGLang {@code --kv-events-config}, publisher zmq). */
        ZMQ;

        @JsonValue
        public String yamlName() {
            return switch (this) {
                case DIRECT -> "direct";
                case EVENT_BUS -> "event_bus";
                case ZMQ -> "zmq";
            };
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
     * @param zmq       {@code zmq} only: the engine's PUB and replay sockets
     */
    public record Source(String backend, Transport transport, @Nullable URI url, @Nullable Tls tls,
                         @JsonUnwrapped @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Zmq zmq) {
        public Source {
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(transport, "transport");
            if ((transport == Transport.DIRECT) != (url != null)) {
                throw new IllegalArgumentException("url: required for direct, absent otherwise");
            }
            if (tls != null && (url == null || !"https".equals(url.getScheme()))) {
                throw new IllegalArgumentException("tls: only for an https url");
            }
            if ((transport == Transport.ZMQ) != (zmq != null)) {
                throw new IllegalArgumentException("zmq: required for transport zmq, absent otherwise");
            }
        }

        /** A source without a {@code tls} block. */
        public Source(String backend, Transport transport, @Nullable URI url) {
            this(backend, transport, url, null, null);
        }

        /** A direct or event_bus source. */
        public Source(String backend, Transport transport, @Nullable URI url, @Nullable Tls tls) {
            this(backend, transport, url, tls, null);
        }

        /** A {@code zmq} source. */
        public static Source zmq(String backend, Zmq zmq) {
            return new Source(backend, Transport.ZMQ, null, null, zmq);
        }
    }

    /**
     * {@code sources[]} of {@code transport: zmq}: where the engine publishes (vLLM's and SGLang's
     * {@code ZmqEventPublisher}). Kept as written, so the config reads back the same; parsed once here.
     *
     * @param endpoint       its PUB socket, {@code tcp://host:port}
     * @param replayEndpoint its ROUTER replay socket, or null when the engine runs without one (a gap then clears
     *                       the backend)
     * @param topic          the publisher's topic (the subscription prefix; empty: every message)
     */
    public record Zmq(String endpoint, @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String replayEndpoint,
                      String topic) {
        public static final int MAX_TOPIC_BYTES = 128;

        public Zmq {
            Objects.requireNonNull(topic, "topic");
            if (ZmtpEndpoint.parse(endpoint).isEmpty()) {
                throw new IllegalArgumentException("endpoint: expected tcp://host:port");
            }
            if (replayEndpoint != null && ZmtpEndpoint.parse(replayEndpoint).isEmpty()) {
                throw new IllegalArgumentException("replay_endpoint: expected tcp://host:port");
            }
        }

        /** The PUB socket's address. */
        public ZmtpEndpoint pub() {
            return ZmtpEndpoint.parse(endpoint).orElseThrow();
        }

        /** The replay socket's address, or null. */
        public @Nullable ZmtpEndpoint replay() {
            return replayEndpoint == null ? null : ZmtpEndpoint.parse(replayEndpoint).orElseThrow();
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
