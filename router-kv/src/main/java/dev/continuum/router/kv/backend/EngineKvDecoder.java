package dev.continuum.router.kv.backend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Decodes one msgpack payload of an engine's native KV-event stream (docs/kv-routing.md, "Engine streams"): the
 * {@code KVEventBatch} of vLLM's {@code vllm/distributed/kv_events.py} and SGLang's
 * {@code python/sglang/srt/disaggregation/kv_events.py}, in either generation:
 * <ul>
 *   <li>arrays (msgspec {@code array_like}, SGLang and vLLM before 0.26): the batch {@code [ts, events]} or
 *       {@code [ts, events, data_parallel_rank]}, each event {@code [tag, field...]} in declaration order with
 *       trailing defaults omitted;</li>
 *   <li>maps (vLLM 0.26 on, vllm-project/vllm PR #42892): the batch {@code {ts, events, data_parallel_rank}}
 *       (an array batch is read too), each event {@code {"type": tag, field: value...}}; unknown fields are
 *       skipped, so later additions ({@code extra_keys}, {@code group_idx}, {@code kv_cache_spec_kind}) pass.</li>
 * </ul>
 * Block hashes are integers (u64 or i64 bit patterns) or, from engines that hash with SHA-256, byte strings of at
 * most {@link #MAX_HASH_BYTES}, folded to 64 bits with XXH3 (only equality matters to the index).
 *
 * <p>Every count read off the wire is bounded before anything is sized from it. One unusable event is dropped and
 * named; the rest of its batch still applies. A batch whose structure cannot be read applies nothing.
 */
public final class EngineKvDecoder {
    public static final int MAX_EVENTS_PER_BATCH = 4096;
    public static final int MAX_BLOCKS_PER_EVENT = 8192;
    public static final int MAX_TOKENS_PER_EVENT = 1 << 20;
    public static final int MAX_HASH_BYTES = 64;
    private static final int MAX_TAG_BYTES = 32;
    private static final LongHashFunction FOLD = LongHashFunction.xx3();

    private EngineKvDecoder() {
    }

    /** Why one event (or a whole batch, for {@link #MALFORMED}) was dropped: a closed set of metric labels. */
    public enum Drop {
        /** The batch's structure could not be read (truncated, not a batch, wrong arity): nothing of it applies. */
        MALFORMED,
        /** An event whose tag is not one of the three known ones. */
        UNKNOWN_TAG,
        /** An event with a field of the wrong type, a wrong arity, or token IDs that do not fill its blocks. */
        WRONG_TYPE,
        /** An event above a count bound (blocks, tokens, hash bytes). */
        TOO_LARGE
    }

    /**
     * One decoded event.
     *
     * @param kind        stored, removed or cleared
     * @param blockHashes the engine's hashes of the blocks concerned (empty for cleared)
     * @param parentHash  a stored event's parent block hash, or null for a prefix start
     * @param tokenIds    a stored event's token IDs (empty when the engine sent none)
     * @param blockSize   a stored event's tokens per block (0 otherwise)
     */
    public record Event(KvCacheEvent.Kind kind, long[] blockHashes, @Nullable Long parentHash, int[] tokenIds,
                        int blockSize) {
    }

    /**
     * A decoded batch: its applicable events in order and the events dropped from it, or, when
     * {@code malformed}, nothing to apply.
     */
    public record Batch(List<Event> events, List<Drop> drops, boolean malformed) {
        static final Batch MALFORMED_BATCH = new Batch(List.of(), List.of(Drop.MALFORMED), true);
    }

    /** A field of the wrong type or shape: the event is dropped, its remaining values skipped. */
    private static final class BadEvent extends Exception {
        private static final long serialVersionUID = 1L;
        final Drop drop;

        BadEvent(Drop drop) {
            super(null, null, false, false);
            this.drop = drop;
        }
    }

    public static Batch decode(byte[] array, int offset, int length) {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(array, offset, length)) {
            Batch batch = batch(in, length);
            return in.hasNext() ? Batch.MALFORMED_BATCH : batch; // trailing bytes: not one batch
        } catch (IOException | RuntimeException e) {
            // Truncated input, a bad msgpack byte, an integer that overflows: the batch's structure is unknown.
            return Batch.MALFORMED_BATCH;
        }
    }

    private static Batch batch(MessageUnpacker in, int length) throws IOException {
        ValueType type = in.getNextFormat().getValueType();
        int events = -1;
        List<Event> out = new ArrayList<>();
        List<Drop> drops = new ArrayList<>();
        if (type == ValueType.ARRAY) {
            int n = in.unpackArrayHeader();
            if (n < 2 || n > 3 || !in.getNextFormat().getValueType().isNumberType()) {
                return Batch.MALFORMED_BATCH;
            }
            in.skipValue(); // ts
            if (!readEvents(in, length, out, drops)) {
                return Batch.MALFORMED_BATCH;
            }
            if (n == 3 && !skipRank(in)) {
                return Batch.MALFORMED_BATCH;
            }
            return new Batch(out, drops, false);
        }
        if (type != ValueType.MAP) {
            return Batch.MALFORMED_BATCH;
        }
        int n = in.unpackMapHeader();
        if (n > 8) {
            return Batch.MALFORMED_BATCH;
        }
        for (int i = 0; i < n; i++) {
            String key = shortString(in, length);
            if (key == null) {
                return Batch.MALFORMED_BATCH;
            }
            if (key.equals("events")) {
                if (events >= 0 || !readEvents(in, length, out, drops)) {
                    return Batch.MALFORMED_BATCH;
                }
                events = 1;
            } else if (key.equals("data_parallel_rank")) {
                if (!skipRank(in)) {
                    return Batch.MALFORMED_BATCH;
                }
            } else {
                in.skipValue(); // ts, and fields of later versions
            }
        }
        return events < 0 ? Batch.MALFORMED_BATCH : new Batch(out, drops, false);
    }

    private static boolean skipRank(MessageUnpacker in) throws IOException {
        ValueType t = in.getNextFormat().getValueType();
        if (t != ValueType.INTEGER && t != ValueType.NIL) {
            return false;
        }
        in.skipValue();
        return true;
    }

    private static boolean readEvents(MessageUnpacker in, int length, List<Event> out, List<Drop> drops)
            throws IOException {
        if (in.getNextFormat().getValueType() != ValueType.ARRAY) {
            return false;
        }
        int n = in.unpackArrayHeader();
        // Each event takes at least one byte: a count above the payload's length is a lie.
        if (n > MAX_EVENTS_PER_BATCH || n > length) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            ValueType t = in.getNextFormat().getValueType();
            try {
                if (t == ValueType.ARRAY) {
                    out.add(arrayEvent(in, length));
                } else if (t == ValueType.MAP) {
                    out.add(mapEvent(in, length));
                } else {
                    in.skipValue();
                    drops.add(Drop.WRONG_TYPE);
                }
            } catch (BadEvent bad) {
                drops.add(bad.drop);
            }
        }
        return true;
    }

    /** {@code [tag, ...fields]} with the tag's fields in declaration order; trailing optional ones may be absent. */
    private static Event arrayEvent(MessageUnpacker in, int length) throws IOException, BadEvent {
        int n = in.unpackArrayHeader();
        if (n < 1 || n > 64) {
            skip(in, n);
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        KvCacheEvent.Kind kind = tag(in, n - 1, length);
        int left = n - 1;
        try {
            switch (kind) {
                case CLEARED -> {
                    return new Event(kind, new long[0], null, new int[0], 0);
                }
                case REMOVED -> {
                    if (left < 1) {
                        throw new BadEvent(Drop.WRONG_TYPE);
                    }
                    left--;
                    return new Event(kind, hashes(in, length), null, new int[0], 0);
                }
                default -> {
                    // block_hashes, parent_block_hash, token_ids, block_size, then optional trailing fields.
                    // Each reader consumes its value even when it refuses it, so left stays exact.
                    if (left < 4) {
                        throw new BadEvent(Drop.WRONG_TYPE);
                    }
                    left--;
                    long[] hashes = hashes(in, length);
                    left--;
                    Long parent = in.tryUnpackNil() ? null : hash(in, length);
                    left--;
                    int[] tokens = tokens(in, length);
                    left--;
                    int blockSize = blockSize(in);
                    return stored(hashes, parent, tokens, blockSize);
                }
            }
        } finally {
            skip(in, left); // lora_id, medium, lora_name, ... and whatever a bad field left unread
        }
    }

    private static Event mapEvent(MessageUnpacker in, int length) throws IOException, BadEvent {
        int n = in.unpackMapHeader();
        if (n > 64) {
            skip(in, 2 * n);
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        KvCacheEvent.Kind kind = null;
        long[] hashes = null;
        Long parent = null;
        int[] tokens = new int[0];
        int blockSize = 0;
        BadEvent bad = null;
        for (int i = 0; i < n; i++) {
            String key = shortString(in, length);
            if (key == null || bad != null) {
                in.skipValue();
                bad = bad != null ? bad : new BadEvent(Drop.WRONG_TYPE);
                continue;
            }
            try {
                switch (key) {
                    case "type" -> kind = tag(in, 0, length);
                    case "block_hashes" -> hashes = hashes(in, length);
                    case "parent_block_hash" -> parent = in.tryUnpackNil() ? null : hash(in, length);
                    case "token_ids" -> tokens = tokens(in, length);
                    case "block_size" -> blockSize = blockSize(in);
                    default -> in.skipValue();
                }
            } catch (BadEvent e) {
                bad = e;
            }
        }
        if (bad != null) {
            throw bad;
        }
        if (kind == null) {
            throw new BadEvent(Drop.UNKNOWN_TAG);
        }
        return switch (kind) {
            case CLEARED -> new Event(kind, new long[0], null, new int[0], 0);
            case REMOVED -> {
                if (hashes == null) {
                    throw new BadEvent(Drop.WRONG_TYPE);
                }
                yield new Event(kind, hashes, null, new int[0], 0);
            }
            case STORED -> {
                if (hashes == null) {
                    throw new BadEvent(Drop.WRONG_TYPE);
                }
                yield stored(hashes, parent, tokens, blockSize);
            }
        };
    }

    private static Event stored(long[] hashes, @Nullable Long parent, int[] tokens, int blockSize) throws BadEvent {
        // Token IDs, when sent, cover the stored blocks exactly: anything else is not an event of this family.
        if (blockSize < 1 || (tokens.length != 0 && (long) hashes.length * blockSize != tokens.length)) {
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        return new Event(KvCacheEvent.Kind.STORED, hashes, parent, tokens, blockSize);
    }

    /** Reads the tag; an unknown one skips {@code rest} more values (the event's fields) and drops the event. */
    private static KvCacheEvent.Kind tag(MessageUnpacker in, int rest, int length) throws IOException, BadEvent {
        String tag = shortString(in, length);
        KvCacheEvent.Kind kind = tag == null ? null : switch (tag) {
            case "BlockStored" -> KvCacheEvent.Kind.STORED;
            case "BlockRemoved" -> KvCacheEvent.Kind.REMOVED;
            case "AllBlocksCleared" -> KvCacheEvent.Kind.CLEARED;
            default -> null;
        };
        if (kind == null) {
            skip(in, rest);
            throw new BadEvent(tag == null ? Drop.WRONG_TYPE : Drop.UNKNOWN_TAG);
        }
        return kind;
    }

    /** A string of at most {@link #MAX_TAG_BYTES} bytes, or null (the value consumed) for anything else. */
    private static @Nullable String shortString(MessageUnpacker in, int length) throws IOException {
        if (in.getNextFormat().getValueType() != ValueType.STRING) {
            in.skipValue();
            return null;
        }
        int len = in.unpackRawStringHeader();
        if (len > MAX_TAG_BYTES) {
            skipPayload(in, len, length);
            return null;
        }
        return new String(in.readPayload(len), StandardCharsets.UTF_8);
    }

    private static long[] hashes(MessageUnpacker in, int length) throws IOException, BadEvent {
        if (in.getNextFormat().getValueType() != ValueType.ARRAY) {
            in.skipValue();
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        int n = in.unpackArrayHeader();
        if (n > MAX_BLOCKS_PER_EVENT || n > length) {
            skip(in, n);
            throw new BadEvent(Drop.TOO_LARGE);
        }
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            try {
                out[i] = hash(in, length);
            } catch (BadEvent e) {
                skip(in, n - i - 1);
                throw e;
            }
        }
        return out;
    }

    /** An integer as its 64-bit pattern (u64 above 2^63 and negative i64 alike), or a short byte string folded. */
    private static long hash(MessageUnpacker in, int length) throws IOException, BadEvent {
        MessageFormat f = in.getNextFormat();
        if (f == MessageFormat.UINT64) {
            return in.unpackBigInteger().longValue(); // the low 64 bits: the u64's own pattern
        }
        if (f.getValueType() == ValueType.INTEGER) {
            return in.unpackLong();
        }
        if (f.getValueType() == ValueType.BINARY) {
            int len = in.unpackBinaryHeader();
            if (len > MAX_HASH_BYTES) {
                skipPayload(in, len, length);
                throw new BadEvent(Drop.TOO_LARGE);
            }
            return FOLD.hashBytes(in.readPayload(len));
        }
        in.skipValue();
        throw new BadEvent(Drop.WRONG_TYPE);
    }

    private static int[] tokens(MessageUnpacker in, int length) throws IOException, BadEvent {
        if (in.getNextFormat().getValueType() != ValueType.ARRAY) {
            in.skipValue();
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        int n = in.unpackArrayHeader();
        if (n > MAX_TOKENS_PER_EVENT || n > length) {
            skip(in, n);
            throw new BadEvent(Drop.TOO_LARGE);
        }
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            MessageFormat f = in.getNextFormat();
            if (f.getValueType() != ValueType.INTEGER || f == MessageFormat.UINT64) {
                skip(in, n - i);
                throw new BadEvent(Drop.WRONG_TYPE);
            }
            long t = in.unpackLong();
            if (t < 0 || t > 0xFFFF_FFFFL) {
                skip(in, n - i - 1);
                throw new BadEvent(Drop.WRONG_TYPE);
            }
            out[i] = (int) t; // a u32 token ID, kept as its bit pattern
        }
        return out;
    }

    private static int blockSize(MessageUnpacker in) throws IOException, BadEvent {
        MessageFormat f = in.getNextFormat();
        if (f.getValueType() != ValueType.INTEGER || f == MessageFormat.UINT64) {
            in.skipValue();
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        long v = in.unpackLong();
        if (v < 1 || v > 65_536) {
            throw new BadEvent(Drop.WRONG_TYPE);
        }
        return (int) v;
    }

    /**
     * Skips a string or binary body whose header was read. A length past the payload's end is a lie: refused
     * before msgpack-core would allocate a buffer of that size to gather it.
     */
    private static void skipPayload(MessageUnpacker in, int len, int length) throws IOException {
        if (len < 0 || len > length - in.getTotalReadBytes()) {
            throw new IOException("payload length past the end");
        }
        in.readPayloadAsReference(len); // within the input array: a view, not a copy
    }

    private static void skip(MessageUnpacker in, int values) throws IOException {
        if (values > 0) {
            in.skipValue(values);
        }
    }
}
