package dev.continuum.router.bench;

import dev.continuum.router.kv.events.KvEventDecoder;
import dev.continuum.router.kv.events.KvEvents;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Decoding one kv-events payload ({@code KvEventDecoder}): a {@code stored} RouterEvent of {@code blocks}
 * blocks with full-width u64 hashes, in upstream's named layout (ai-dynamo/dynamo
 * lib/kv-router/src/protocols.rs, rmp_serde named maps), into the reused {@code KvEvents}. Must allocate
 * nothing.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class KvEventsDecodeBenchmark {
    @Param({"16", "128"})
    public int blocks;

    private final KvEventDecoder decoder = new KvEventDecoder();
    private final KvEvents events = new KvEvents();
    private byte[] payload;

    @Setup
    public void setup() {
        SplittableRandom random = new SplittableRandom(3);
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3).packString("worker_id").packLong(0x7a00_0000_0000_1000L);
            p.packString("storage_tier").packString("device");
            p.packString("event").packMapHeader(3).packString("event_id").packLong(123_456);
            p.packString("data").packMapHeader(1).packString("stored").packMapHeader(3);
            p.packString("parent_hash").packBigInteger(u64(random));
            p.packString("start_position").packNil();
            p.packString("blocks").packArrayHeader(blocks);
            for (int i = 0; i < blocks; i++) {
                p.packMapHeader(3).packString("block_hash").packBigInteger(u64(random));
                p.packString("tokens_hash").packBigInteger(u64(random));
                p.packString("mm_extra_info").packNil();
            }
            p.packString("dp_rank").packInt(0);
            payload = p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static BigInteger u64(SplittableRandom random) {
        return new BigInteger(Long.toUnsignedString(random.nextLong()));
    }

    @Benchmark
    public int decode() {
        decoder.decode(payload, 0, payload.length, events);
        return events.size() + events.blockCount(0);
    }
}
