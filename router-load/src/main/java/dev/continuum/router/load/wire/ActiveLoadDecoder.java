package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.wire.MsgpackCursor;
import dev.continuum.router.eventplane.wire.WireException;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;
import org.msgpack.value.ValueType;

/**
 * Decodes an {@code ActiveLoad} payload (upstream {@code lib/kv-router/src/protocols.rs}; fields in
 * {@code docs/load-signals.md}) in either encoding of the N-2 window:
 *
 * <ul>
 *   <li>a named map, by key name in any order, unknown keys skipped; {@code dp_rank} defaults to 0 and the
 *       optional fields to nil when absent;</li>
 *   <li>a positional array: older upstreams write {@code [worker_id, dp_rank, active_decode_blocks,
 *       active_prefill_tokens, kv_used_blocks]}, newer ones insert {@code scheduler_load_scope} before
 *       {@code kv_used_blocks}. Lengths 4 and 6 are unambiguous; at length 5 the type of the fifth value
 *       decides (an integer is {@code kv_used_blocks}, a string is the scope, nil means both are nil).</li>
 * </ul>
 *
 * Thread-safe (the msgpack cursor is one per thread; keys are compared in place).
 */
public final class ActiveLoadDecoder {
    private static final byte[] KEY_WORKER_ID = EventFrameDecoder.ascii("worker_id");
    private static final byte[] KEY_DP_RANK = EventFrameDecoder.ascii("dp_rank");
    private static final byte[] KEY_ACTIVE_DECODE_BLOCKS = EventFrameDecoder.ascii("active_decode_blocks");
    private static final byte[] KEY_ACTIVE_PREFILL_TOKENS = EventFrameDecoder.ascii("active_prefill_tokens");
    private static final byte[] KEY_SCHEDULER_LOAD_SCOPE = EventFrameDecoder.ascii("scheduler_load_scope");
    private static final byte[] KEY_KV_USED_BLOCKS = EventFrameDecoder.ascii("kv_used_blocks");
    private static final byte[] SCOPE_LOCAL = EventFrameDecoder.ascii("local");
    private static final byte[] SCOPE_REPLICA = EventFrameDecoder.ascii("replica_synchronized");
    private static final long MAX_DP_RANK = 0xFFFF_FFFFL;
    private static final byte[][] KEYS = {KEY_WORKER_ID, KEY_DP_RANK, KEY_ACTIVE_DECODE_BLOCKS,
        KEY_ACTIVE_PREFILL_TOKENS, KEY_SCHEDULER_LOAD_SCOPE, KEY_KV_USED_BLOCKS};
    private static final ThreadLocal<MsgpackCursor> CURSOR = ThreadLocal.withInitial(MsgpackCursor::new);

    private ActiveLoadDecoder() {
    }

    public static Decoded<ActiveLoad> decode(byte[] payload) {
        try {
            return new Decoded.Ok<>(decodeOrThrow(CURSOR.get().reset(payload, 0, payload.length)));
        } catch (WireException e) {
            return new Decoded.Dropped<>(e.drop(), e.getMessage());
        }
    }

    private static ActiveLoad decodeOrThrow(MsgpackCursor c) throws WireException {
        ActiveLoad load;
        ValueType type = c.nextType();
        if (type == ValueType.MAP) {
            load = map(c);
        } else if (type == ValueType.ARRAY) {
            load = array(c);
        } else {
            throw WireException.malformed("ActiveLoad is not a map or an array");
        }
        if (c.remaining() != 0) {
            throw WireException.malformed("bytes after ActiveLoad");
        }
        return load;
    }

    private static ActiveLoad map(MsgpackCursor c) throws WireException {
        int n = c.mapHeader();
        long workerId = 0;
        boolean hasWorker = false;
        long dpRank = 0;
        Long decodeBlocks = null;
        Long prefillTokens = null;
        String scope = null;
        Long kvUsed = null;
        for (int i = 0; i < n; i++) {
            if (c.nextType() != ValueType.STRING) {
                throw WireException.malformed("ActiveLoad key");
            }
            switch (c.stringIndex(KEYS)) {
                case 0 -> {
                    workerId = c.unsigned64();
                    hasWorker = true;
                }
                case 1 -> dpRank = rank(c);
                case 2 -> decodeBlocks = optional(c);
                case 3 -> prefillTokens = optional(c);
                case 4 -> scope = scope(c);
                case 5 -> kvUsed = optional(c);
                default -> c.skip();
            }
        }
        if (!hasWorker) {
            throw WireException.malformed("worker_id missing");
        }
        return new ActiveLoad(workerId, dpRank, decodeBlocks, prefillTokens, scope, kvUsed);
    }

    private static ActiveLoad array(MsgpackCursor c) throws WireException {
        int n = c.arrayHeader();
        if (n < 4 || n > 6) {
            throw WireException.malformed("ActiveLoad array length " + n + " (expected: 4..6)");
        }
        long workerId = c.unsigned64();
        long dpRank = rank(c);
        Long decodeBlocks = optional(c);
        Long prefillTokens = optional(c);
        String scope = null;
        Long kvUsed = null;
        if (n == 5) {
            ValueType fifth = c.nextType();
            if (fifth == ValueType.STRING) {
                scope = scope(c);
            } else {
                kvUsed = optional(c); // an integer (older upstream) or nil (either upstream: both fields nil)
            }
        } else if (n == 6) {
            scope = scope(c);
            kvUsed = optional(c);
        }
        return new ActiveLoad(workerId, dpRank, decodeBlocks, prefillTokens, scope, kvUsed);
    }

    private static long rank(MsgpackCursor c) throws WireException {
        long rank = c.unsigned64();
        if (Long.compareUnsigned(rank, MAX_DP_RANK) > 0) { // unsigned: 2^63 and above read negative here
            throw WireException.malformed("dp_rank above u32");
        }
        return rank;
    }

    /**
     * A u64 load counter, or null for nil. A counter is a magnitude, not an identity: a value above
     * {@link Long#MAX_VALUE} is held as {@code Long.MAX_VALUE} (the most load a long can say), so it can never
     * read as negative, and costs built on it are the largest, never the smallest.
     */
    private static @Nullable Long optional(MsgpackCursor c) throws WireException {
        if (c.tryNil()) {
            return null;
        }
        long value = c.unsigned64();
        return value < 0 ? Long.MAX_VALUE : value;
    }

    private static @Nullable String scope(MsgpackCursor c) throws WireException {
        if (c.tryNil()) {
            return null;
        }
        if (c.nextType() != ValueType.STRING) {
            throw WireException.malformed("scheduler_load_scope");
        }
        byte[] value = c.stringBytes();
        // The two upstream values are shared constants; anything newer is kept as sent (bounded in length).
        if (Arrays.equals(value, SCOPE_LOCAL)) {
            return "local";
        }
        if (Arrays.equals(value, SCOPE_REPLICA)) {
            return "replica_synchronized";
        }
        return new String(value, java.nio.charset.StandardCharsets.UTF_8);
    }
}
