package dev.continuum.router.kv.backend;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigInteger;
import org.jspecify.annotations.Nullable;

/**
 * One backend KV event as the SSE {@code data} of a {@code kv_cache_index} source carries it (docs/kv-routing.md,
 * "Event format"): a JSON object whose {@code type} is one of vLLM's KV event names ({@code BlockStored},
 * {@code BlockRemoved}, {@code AllBlocksCleared}; vllm/distributed/kv_events.py) and whose {@code block_hashes}
 * are unsigned 64-bit integers. Other fields (a parent hash, token IDs) are ignored.
 *
 * @param kind        what happened
 * @param blockHashes the blocks concerned (empty for {@code AllBlocksCleared})
 */
public record KvCacheEvent(Kind kind, long[] blockHashes) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    public enum Kind { STORED, REMOVED, CLEARED }

    /** The event in {@code data}, or null when it is not one (the caller counts it as malformed). */
    public static @Nullable KvCacheEvent parse(String data) {
        JsonNode node;
        try {
            node = JSON.readTree(data);
        } catch (JsonProcessingException e) {
            return null;
        }
        if (node == null || !node.isObject()) {
            return null;
        }
        Kind kind = switch (node.path("type").asText("")) {
            case "BlockStored" -> Kind.STORED;
            case "BlockRemoved" -> Kind.REMOVED;
            case "AllBlocksCleared" -> Kind.CLEARED;
            default -> null;
        };
        if (kind == null) {
            return null;
        }
        if (kind == Kind.CLEARED) {
            return new KvCacheEvent(kind, new long[0]);
        }
        JsonNode hashes = node.get("block_hashes");
        if (hashes == null || !hashes.isArray()) {
            return null;
        }
        long[] out = new long[hashes.size()];
        for (int i = 0; i < out.length; i++) {
            JsonNode h = hashes.get(i);
            if (!h.isIntegralNumber()) {
                return null;
            }
            BigInteger v = h.bigIntegerValue();
            if (v.signum() < 0 || v.compareTo(U64_MAX) > 0) {
                return null;
            }
            out[i] = v.longValue();
        }
        return new KvCacheEvent(kind, out);
    }

    /** An SSE {@code id} as a u64 cursor, or null when absent or not a decimal u64. */
    public static @Nullable Long eventId(@Nullable String id) {
        if (id == null || id.isEmpty() || id.length() > 20) {
            return null;
        }
        try {
            return Long.parseUnsignedLong(id);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
