package dev.continuum.router.kv.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Hostile payloads straight into the decoder, packed with msgpack-core's packer (the stream tests use Python's
 * encoder for well-formed ones): lying counts are refused before anything is sized from them, a truncated or
 * trailing-byte batch applies nothing, and random bytes never throw. Also the sequence's wrap and distances.
 */
class EngineKvDecoderTest {
    private static byte[] pack(Packing body) throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            body.write(p);
            return p.toByteArray();
        }
    }

    private interface Packing {
        void write(MessageBufferPacker p) throws IOException;
    }

    private static byte[] goodBatch() throws IOException {
        return pack(p -> p.packArrayHeader(2).packDouble(1).packArrayHeader(1)
                .packArrayHeader(5).packString("BlockStored").packArrayHeader(1).packLong(-5).packNil()
                .packArrayHeader(2).packInt(1).packInt(2).packInt(2));
    }

    @Test
    void aGoodBatchDecodesAndItsTruncationsAndExtensionsDoNot() throws IOException {
        byte[] good = goodBatch();
        EngineKvDecoder.Batch b = EngineKvDecoder.decode(good, 0, good.length);
        assertThat(b.malformed()).isFalse();
        assertThat(b.events()).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo(KvCacheEvent.Kind.STORED);
            assertThat(e.blockHashes()).containsExactly(-5L);
            assertThat(e.tokenIds()).containsExactly(1, 2);
        });
        for (int len = 0; len < good.length; len++) {
            assertThat(EngineKvDecoder.decode(good, 0, len).malformed()).as("prefix %d", len).isTrue();
        }
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertThat(EngineKvDecoder.decode(longer, 0, longer.length).malformed()).isTrue();
    }

    @Test
    void countsThatLieAreRefusedWithoutAllocating() throws IOException {
        // 2^32 - 1 events announced in a few bytes.
        byte[] events = pack(p -> p.packArrayHeader(2).packDouble(1).packArrayHeader(Integer.MAX_VALUE));
        assertThat(EngineKvDecoder.decode(events, 0, events.length).malformed()).isTrue();
        // A stored event announcing 2^31 - 1 token IDs: that event is too large, nothing is sized from the count.
        byte[] tokens = pack(p -> p.packArrayHeader(2).packDouble(1).packArrayHeader(1)
                .packArrayHeader(5).packString("BlockStored").packArrayHeader(0).packNil()
                .packArrayHeader(Integer.MAX_VALUE));
        EngineKvDecoder.Batch b = EngineKvDecoder.decode(tokens, 0, tokens.length);
        assertThat(b.events()).isEmpty();
        assertThat(b.malformed() || b.drops().contains(EngineKvDecoder.Drop.TOO_LARGE)).isTrue();
        // A 65-byte hash.
        byte[] hash = pack(p -> p.packArrayHeader(2).packDouble(1).packArrayHeader(1)
                .packArrayHeader(2).packString("BlockRemoved").packArrayHeader(1).packBinaryHeader(65)
                .addPayload(new byte[65]));
        assertThat(EngineKvDecoder.decode(hash, 0, hash.length).drops()).containsExactly(EngineKvDecoder.Drop.TOO_LARGE);
    }

    @Test
    void randomBytesNeverThrow() throws IOException {
        SplittableRandom random = new SplittableRandom(31);
        byte[] good = goodBatch();
        for (int i = 0; i < 20_000; i++) {
            byte[] bytes;
            if (i % 2 == 0) {
                bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
            } else {
                bytes = good.clone();
                bytes[random.nextInt(bytes.length)] = (byte) random.nextInt(256);
            }
            EngineKvDecoder.Batch b = EngineKvDecoder.decode(bytes, 0, bytes.length);
            assertThat(b.malformed() ? b.events() : java.util.List.of()).isEmpty();
        }
    }

    @Test
    void theSequenceWrapsAndTellsGapsFromRestarts() {
        EngineSequence s = new EngineSequence();
        assertThat(s.classify(-1L)).isEqualTo(EngineSequence.Verdict.NEXT);
        s.consumed(-1L);
        assertThat(s.classify(0)).isEqualTo(EngineSequence.Verdict.NEXT);
        s.consumed(0);
        assertThat(s.classify(5)).isEqualTo(EngineSequence.Verdict.GAP);
        assertThat(s.missing(5)).isEqualTo(4);
        assertThat(s.classify(0)).isEqualTo(EngineSequence.Verdict.BEHIND);
        assertThat(s.classify(-1L)).isEqualTo(EngineSequence.Verdict.BEHIND);
    }
}
