package dev.continuum.router.kv.backend;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One {@code dynamo.kv_cache_index} source as {@code GET /admin/dynamo/workers} shows it
 * ({@code kv_cache_index_sources}, docs/admin-api.md). Built per request from the source's immutable status and
 * its volatile counters; nothing in it comes from a peer except the bus's error code, already restricted to
 * {@code [A-Za-z0-9_.-]{1,64}}.
 *
 * @param backend     the {@code backends[].name}
 * @param transport   {@code direct} or {@code event_bus}
 * @param state       {@code pending}, {@code connecting}, {@code connected} or {@code backoff}
 * @param kvListener  the {@code brokers[].id} of the kv-listener session relaying it now (event_bus, connected)
 * @param clientId    that session's {@code client_id}
 * @param lastEventId the resume point: the ID of the last event applied (null before the first)
 * @param blocks      blocks the index holds for the backend
 * @param lastEventAt when the last event was applied (null before the first)
 * @param lastError   why the last attempt failed or ended, in words from a closed set (null: none yet)
 * @param lastErrorAt when
 * @param failures    attempts that failed since the source started, by reason: {@code tls}, {@code connect},
 *                    {@code http}, {@code event_bus}
 */
public record KvSourceView(String backend, String transport, String state, @Nullable String kvListener,
                           @Nullable String clientId, @Nullable Long lastEventId, int blocks,
                           @Nullable Instant lastEventAt, @Nullable String lastError, @Nullable Instant lastErrorAt,
                           Map<String, Long> failures) {
    public KvSourceView {
        failures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(failures));
    }

    /** The admin JSON row, keys in the documented order; the u64 event ID as a decimal string. */
    public Map<String, Object> toJson() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("backend", backend);
        out.put("transport", transport);
        out.put("state", state);
        out.put("kv_listener", kvListener);
        out.put("client_id", clientId);
        out.put("last_event_id", lastEventId == null ? null : Long.toUnsignedString(lastEventId));
        out.put("blocks", blocks);
        out.put("last_event_at", lastEventAt == null ? null : lastEventAt.toString());
        out.put("last_error", lastError);
        out.put("last_error_at", lastErrorAt == null ? null : lastErrorAt.toString());
        out.put("failures", failures);
        return out;
    }
}
