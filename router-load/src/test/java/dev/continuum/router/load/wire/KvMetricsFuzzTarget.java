package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.continuum.router.load.Fixtures;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Coverage-guided fuzzing of the kv_metrics decoders (docs/testing.md, "Fuzzing"): the fuzzer's bytes are an
 * {@code ActiveLoad} payload, and frame 3 of a four-part kv_metrics message around it.
 *
 * <p>The contract checked, beyond "no crash": both decoders end every input as a value or a counted drop
 * (no other exception); a decoded sample survives a re-encode through msgpack-core's packer unchanged (so a
 * value the router acts on is what the bytes said, not an artefact of a misread); a decoded envelope carries
 * our topic and a payload within the 16 KiB bound.
 */
class KvMetricsFuzzTarget {
    private static final EventFrameDecoder FRAMES = EventFrameDecoder.kvMetrics();

    @FuzzTest(maxDuration = "10s")
    void decodersEndEveryInputAsAValueOrADrop(byte[] input) {
        Decoded<ActiveLoad> load = ActiveLoadDecoder.decode(input);
        if (load instanceof Decoded.Ok<ActiveLoad> ok) {
            ActiveLoad value = ok.value();
            assertThat(value.dpRank()).isBetween(0L, 0xFFFF_FFFFL);
            assertThat(ActiveLoadDecoder.decode(encode(value))).isEqualTo(new Decoded.Ok<>(value));
        } else {
            assertThat(((Decoded.Dropped<ActiveLoad>) load).reason()).isNotNull();
        }

        byte[][] parts = {Fixtures.TOPIC.getBytes(java.nio.charset.StandardCharsets.US_ASCII), Fixtures.u64(7),
            Fixtures.u64(9), input};
        Decoded<EventEnvelope> envelope = FRAMES.decode(Fixtures.zmtp(parts));
        if (envelope instanceof Decoded.Ok<EventEnvelope> ok) {
            assertThat(ok.value().topic()).isEqualTo(Fixtures.TOPIC);
            assertThat(ok.value().payload().length).isLessThanOrEqualTo(EventFrameDecoder.MAX_KV_METRICS_PAYLOAD_BYTES);
            assertThat(ActiveLoadDecoder.decode(ok.value().payload())).isNotNull();
        }
    }

    /** The sample as a named map with every field, the way upstream's newer workers write it. */
    private static byte[] encode(ActiveLoad load) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(6);
            p.packString("worker_id").packBigInteger(new java.math.BigInteger(Long.toUnsignedString(load.workerId())));
            p.packString("dp_rank").packLong(load.dpRank());
            p.packString("active_decode_blocks");
            unsigned(p, load.activeDecodeBlocks());
            p.packString("active_prefill_tokens");
            unsigned(p, load.activePrefillTokens());
            p.packString("scheduler_load_scope");
            if (load.schedulerLoadScope() == null) {
                p.packNil();
            } else {
                p.packString(load.schedulerLoadScope());
            }
            p.packString("kv_used_blocks");
            unsigned(p, load.kvUsedBlocks());
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void unsigned(MessageBufferPacker p, @Nullable Long v) throws IOException {
        if (v == null) {
            p.packNil();
        } else {
            p.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(v)));
        }
    }
}
