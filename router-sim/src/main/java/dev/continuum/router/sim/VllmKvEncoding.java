package dev.continuum.router.sim;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * vLLM's own KV-event batches ({@code KVEventBatch} of vllm-project/vllm {@code vllm/distributed/kv_events.py}),
 * in either of its two encodings (docs/simulator.md, "vLLM-native kv-events"). Written for the simulator from
 * upstream's classes; it shares nothing with the router's decoder.
 */
final class VllmKvEncoding {
    static final String MEDIUM_GPU = "GPU";

    private VllmKvEncoding() {
    }

    /** One batch holding one {@code BlockStored} event of {@code hashes[from..to)}. */
    static byte[] stored(VllmKvGeneration g, double ts, int rank, long[] hashes, int from, int to,
                         @Nullable Long parent, int[] tokens, int blockSize) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            batchHeader(p, g, ts);
            if (g == VllmKvGeneration.ARRAY) {
                p.packArrayHeader(7).packString("BlockStored");
            } else {
                p.packMapHeader(11).packString("type").packString("BlockStored");
            }
            key(p, g, "block_hashes");
            hashes(p, hashes, from, to);
            key(p, g, "parent_block_hash");
            if (parent == null) {
                p.packNil();
            } else {
                u64(p, parent);
            }
            key(p, g, "token_ids");
            int first = from * blockSize;
            int last = Math.min(tokens.length, to * blockSize);
            p.packArrayHeader(last - first);
            for (int i = first; i < last; i++) {
                p.packLong(tokens[i] & 0xFFFF_FFFFL);
            }
            key(p, g, "block_size");
            p.packInt(blockSize);
            key(p, g, "lora_id");
            p.packNil();
            key(p, g, "medium");
            p.packString(MEDIUM_GPU);
            if (g == VllmKvGeneration.MAP) {
                p.packString("lora_name").packNil();
                p.packString("extra_keys").packNil();
                p.packString("group_idx").packInt(0);
                p.packString("kv_cache_spec_kind").packString("full_attention");
            }
            batchTrailer(p, g, rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One batch holding one {@code BlockRemoved} event of {@code hashes[from..to)}. */
    static byte[] removed(VllmKvGeneration g, double ts, int rank, long[] hashes, int from, int to) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            batchHeader(p, g, ts);
            if (g == VllmKvGeneration.ARRAY) {
                p.packArrayHeader(3).packString("BlockRemoved");
            } else {
                p.packMapHeader(4).packString("type").packString("BlockRemoved");
            }
            key(p, g, "block_hashes");
            hashes(p, hashes, from, to);
            key(p, g, "medium");
            p.packString(MEDIUM_GPU);
            if (g == VllmKvGeneration.MAP) {
                p.packString("group_idx").packInt(0);
            }
            batchTrailer(p, g, rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One batch holding one {@code AllBlocksCleared} event. */
    static byte[] cleared(VllmKvGeneration g, double ts, int rank) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            batchHeader(p, g, ts);
            if (g == VllmKvGeneration.ARRAY) {
                p.packArrayHeader(1).packString("AllBlocksCleared");
            } else {
                p.packMapHeader(1).packString("type").packString("AllBlocksCleared");
            }
            batchTrailer(p, g, rank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void batchHeader(MessageBufferPacker p, VllmKvGeneration g, double ts) throws IOException {
        if (g == VllmKvGeneration.ARRAY) {
            p.packArrayHeader(3).packDouble(ts).packArrayHeader(1);
        } else {
            p.packMapHeader(3).packString("ts").packDouble(ts).packString("events").packArrayHeader(1);
        }
    }

    private static void batchTrailer(MessageBufferPacker p, VllmKvGeneration g, int rank) throws IOException {
        if (g == VllmKvGeneration.MAP) {
            p.packString("data_parallel_rank");
        }
        p.packInt(rank);
    }

    private static void key(MessageBufferPacker p, VllmKvGeneration g, String name) throws IOException {
        if (g == VllmKvGeneration.MAP) {
            p.packString(name);
        }
    }

    private static void hashes(MessageBufferPacker p, long[] hashes, int from, int to) throws IOException {
        p.packArrayHeader(to - from);
        for (int i = from; i < to; i++) {
            u64(p, hashes[i]);
        }
    }

    /** vLLM's integer block hashes are Python ints: non-negative, so a u64 above 2^63 stays unsigned. */
    private static void u64(MessageBufferPacker p, long v) throws IOException {
        p.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(v)));
    }
}
