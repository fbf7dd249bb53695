package dev.continuum.router.kv.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/** The decoder's bounds and drops: every malformed record is counted, none escapes as an exception. */
class KvEventDecoderTest {
    private final KvEventDecoder decoder = new KvEventDecoder();
    private final KvEvents out = new KvEvents();

    private void decode(byte[] payload) {
        decoder.decode(payload, 0, payload.length, out);
    }

    @Test
    void everyTruncationOfAValidEventIsADropNeverAnException() {
        byte[] whole = KvWire.stored(-7L, 42, 1, 99L, new long[] {-1L, 2, 3}, new long[] {4, -5L, 6});
        decode(whole);
        assertThat(out.size()).isEqualTo(1);
        assertThat(out.malformed()).isZero();
        for (int n = 0; n < whole.length; n++) {
            decode(Arrays.copyOf(whole, n));
            assertThat(out.size()).as("prefix %d", n).isZero();
            assertThat(out.malformed()).as("prefix %d", n).isEqualTo(1);
        }
    }

    @Test
    void containerHeadersLargerThanTheBytesLeftAreRefusedBeforeReading() throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(Integer.MAX_VALUE); // claims 2^31 events in a few bytes
            p.packMapHeader(0);
            decode(p.toByteArray());
        }
        assertThat(out.size()).isZero();
        assertThat(out.malformed()).isGreaterThan(0);
    }

    @Test
    void aBatchKeepsItsFirst128EventsAndDropsTheRest() {
        byte[][] events = new byte[130][];
        for (int i = 0; i < events.length; i++) {
            events[i] = KvWire.cleared(1, i, 0);
        }
        decode(KvWire.batch(events));
        assertThat(out.size()).isEqualTo(KvEvents.MAX_EVENTS);
        assertThat(out.malformed()).isEqualTo(2);
        assertThat(out.eventId(127)).isEqualTo(127);
    }

    @Test
    void blocksPastTheMessagesBoundDropTheirEventOnly() {
        long[] big = new long[KvEvents.MAX_BLOCKS - 10];
        long[] small = new long[20];
        long[] fits = new long[10];
        decode(KvWire.batch(KvWire.removed(1, 1, 0, big), KvWire.removed(1, 2, 0, small),
                KvWire.removed(1, 3, 0, fits)));
        assertThat(out.size()).isEqualTo(2);
        assertThat(out.malformed()).isEqualTo(1);
        assertThat(out.eventId(1)).isEqualTo(3);
        assertThat(out.blockFrom(1)).isEqualTo(big.length);
        assertThat(out.blockCount(1)).isEqualTo(10);
    }

    @Test
    void oneBadRecordInABatchIsDroppedAndTheOthersDecode() throws IOException {
        byte[] bad;
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(1).packString("storage_tier").packString("device"); // no worker_id, no event
            bad = p.toByteArray();
        }
        decode(KvWire.batch(KvWire.cleared(1, 1, 0), bad, KvWire.cleared(1, 2, 0)));
        assertThat(out.size()).isEqualTo(2);
        assertThat(out.malformed()).isEqualTo(1);
        assertThat(out.eventId(0)).isEqualTo(1);
        assertThat(out.eventId(1)).isEqualTo(2);
    }

    @Test
    void integersAreReadAsUpstreamTypesThem() throws IOException {
        decode(KvWire.cleared(1, 1, 0x1_0000_0000L)); // dp_rank above u32
        assertThat(out.size()).isZero();
        assertThat(out.malformed()).isEqualTo(1);

        decode(KvWire.event(1, "device", 1, 0, p -> {
            p.packMapHeader(1).packString("stored").packMapHeader(2).packString("parent_hash").packLong(-3)
                    .packString("blocks").packArrayHeader(1).packMapHeader(2).packString("block_hash").packLong(-2)
                    .packString("tokens_hash").packLong(5);
        }));
        assertThat(out.size()).as("engine hashes may arrive as i64 bit casts").isEqualTo(1);
        assertThat(out.parentHash(0)).isEqualTo(-3L);
        assertThat(out.blockHashes()[0]).isEqualTo(-2L);

        decode(KvWire.event(1, "device", 1, 0, p -> {
            p.packMapHeader(1).packString("stored").packMapHeader(2).packString("parent_hash").packNil()
                    .packString("blocks").packArrayHeader(1).packMapHeader(2).packString("block_hash").packLong(2)
                    .packString("tokens_hash").packLong(-5);
        }));
        assertThat(out.size()).as("tokens_hash is a u64 the router computes: never negative").isZero();
        assertThat(out.malformed()).isEqualTo(1);
    }

    @Test
    void positionalFormsDecodeLikeNamedOnes() throws IOException {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packArrayHeader(3).packLong(9).packString("device");
            p.packArrayHeader(3).packLong(5);
            p.packMapHeader(1).packString("stored").packArrayHeader(3).packLong(77).packNil();
            p.packArrayHeader(2).packArrayHeader(3).packLong(1).packLong(11).packNil()
                    .packArrayHeader(2).packLong(2).packLong(22);
            p.packLong(3);
            decode(p.toByteArray());
        }
        assertThat(out.malformed()).isZero();
        assertThat(out.size()).isEqualTo(1);
        assertThat(out.workerId(0)).isEqualTo(9);
        assertThat(out.eventId(0)).isEqualTo(5);
        assertThat(out.dpRank(0)).isEqualTo(3);
        assertThat(out.kind(0)).isEqualTo(KvEvents.Kind.STORED);
        assertThat(out.parentHash(0)).isEqualTo(77);
        assertThat(out.blockCount(0)).isEqualTo(2);
        assertThat(out.tokensHashes()[1]).isEqualTo(22);
    }

    @Test
    void otherTiersAndResidenciesAreMarkedNotIndexable() throws IOException {
        decode(KvWire.clearedOnTier(1, "host_pinned", 1, 0));
        assertThat(out.size()).isEqualTo(1);
        assertThat(out.indexable(0)).isFalse();
        decode(KvWire.clearedOnTier(1, "a_tier_from_the_future", 1, 0));
        assertThat(out.indexable(0)).isFalse();

        for (String domain : new String[] {"worker", "cache_owner"}) {
            try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
                p.packMapHeader(4).packString("worker_id").packLong(1).packString("storage_tier").packString("device")
                        .packString("residency_domain").packString(domain)
                        .packString("event").packMapHeader(2).packString("event_id").packLong(1)
                        .packString("data").packString("cleared");
                decode(p.toByteArray());
            }
            assertThat(out.size()).isEqualTo(1);
            assertThat(out.dpRank(0)).as("dp_rank defaults to 0").isZero();
            assertThat(out.indexable(0)).isEqualTo(domain.equals("worker"));
        }
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(4).packString("worker_id").packLong(1).packString("storage_tier").packString("device")
                    .packString("residency_domain").packNil()
                    .packString("event").packMapHeader(2).packString("event_id").packLong(1)
                    .packString("data").packString("cleared");
            decode(p.toByteArray());
        }
        assertThat(out.malformed()).as("upstream reads a nil residency_domain as invalid").isEqualTo(1);
    }

    @Test
    void unknownVariantsAndTrailingBytesAreMalformed() throws IOException {
        decode(KvWire.event(1, "device", 1, 0, p -> p.packString("exploded")));
        assertThat(out.malformed()).isEqualTo(1);
        byte[] event = KvWire.cleared(1, 1, 0);
        byte[] trailing = Arrays.copyOf(event, event.length + 1);
        decode(trailing);
        assertThat(out.malformed()).isEqualTo(1);
    }
}
