package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventDrop;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import static dev.continuum.router.load.Fixtures.hex;
import static dev.continuum.router.load.Fixtures.zmtp;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.load.Fixtures;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Byte-exact upstream messages, written by hand from upstream's event plane and ActiveLoad (docs/decisions.md)
 * (rmp_serde::to_vec_named: structs as maps with string keys in declaration order, None as nil, smallest integers,
 * Bytes as bin), decoded to the expected values; and each counted drop.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WireFixturesTest {
    /** ActiveLoad {worker_id: 1736491, dp_rank: 2, active_decode_blocks: nil, active_prefill_tokens: nil, kv_used_blocks: 1200}: 88 bytes. */
    static final String ACTIVE_LOAD_MAP = ""
            + "85"
            + "a9 776f726b65725f6964 ce001a7f2b"                     // worker_id: uint32 1736491
            + "a7 64705f72616e6b 02"                                  // dp_rank: 2
            + "b4 6163746976655f6465636f64655f626c6f636b73 c0"        // active_decode_blocks: nil
            + "b5 6163746976655f70726566696c6c5f746f6b656e73 c0"      // active_prefill_tokens: nil
            + "ae 6b765f757365645f626c6f636b73 cd04b0";               // kv_used_blocks: uint16 1200

    /** EventEnvelope {publisher_id: 2046539, sequence: 7, published_at: 1790000000000, topic, payload: bin 88}: 166 bytes. */
    static final String ENVELOPE = ""
            + "85"
            + "ac 7075626c69736865725f6964 ce001f3a4b"                // publisher_id: uint32 2046539
            + "a8 73657175656e6365 07"                                // sequence: 7
            + "ac 7075626c69736865645f6174 cf000001a0c4506c00"        // published_at: uint64 ms
            + "a5 746f706963 aa 6b765f6d657472696373"                 // topic: "kv_metrics"
            + "a7 7061796c6f6164 c458" + ACTIVE_LOAD_MAP;             // payload: bin8, 88 bytes

    static final byte[] TOPIC = "kv_metrics".getBytes(StandardCharsets.US_ASCII);
    static final byte[] PUBLISHER = hex("00000000001f3a4b");
    static final byte[] SEQUENCE = hex("0000000000000007");
    static final byte[] FRAME = hex("01 000000a6" + ENVELOPE);

    private final EventFrameDecoder decoder = EventFrameDecoder.kvMetrics();

    @Test
    void decodesTheUpstreamFourPartMessageAndItsNamedMapActiveLoad() {
        Decoded<EventEnvelope> envelope = decoder.decode(zmtp(TOPIC, PUBLISHER, SEQUENCE, FRAME));

        assertThat(envelope).isInstanceOf(Decoded.Ok.class);
        EventEnvelope e = ((Decoded.Ok<EventEnvelope>) envelope).value();
        assertThat(e).isEqualTo(new EventEnvelope(2046539, 7, 1_790_000_000_000L, "kv_metrics", hex(ACTIVE_LOAD_MAP)));
        assertThat(ActiveLoadDecoder.decode(e.payload()))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1736491, 2, null, null, null, 1200L)));
    }

    @Test
    void decodesTheNewerNamedMapWithSchedulerLoadScope() {
        String l = "86 a9776f726b65725f6964 ce001a7f2b a764705f72616e6b 00"
                + "b46163746976655f6465636f64655f626c6f636b73 cd0136"
                + "b56163746976655f70726566696c6c5f746f6b656e73 cd1000"
                + "b47363686564756c65725f6c6f61645f73636f7065 a56c6f63616c"
                + "ae6b765f757365645f626c6f636b73 c0";

        assertThat(ActiveLoadDecoder.decode(hex(l)))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1736491, 0, 310L, 4096L, "local", null)));
    }

    @Test
    void decodesTheOlderPositionalArrayOfFiveFields() {
        assertThat(ActiveLoadDecoder.decode(hex("95 ce001a7f2b 02 c0 c0 cd04b0")))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1736491, 2, null, null, null, 1200L)));
    }

    @Test
    void decodesTheNewerPositionalArrayOfSixFields() {
        String l = "96 ce001a7f2b 01 cd0136 c0 b4 7265706c6963615f73796e6368726f6e697a6564 4d";

        assertThat(ActiveLoadDecoder.decode(hex(l)))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1736491, 1, 310L, null, "replica_synchronized", 77L)));
    }

    @Test
    void tellsAFiveFieldArrayWithAScopeFromOneWithKvUsedBlocksByTheFifthValuesType() {
        assertThat(ActiveLoadDecoder.decode(hex("95 01 00 c0 c0 a56c6f63616c")))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1, 0, null, null, "local", null)));
        assertThat(ActiveLoadDecoder.decode(hex("95 01 00 c0 c0 c0")))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1, 0, null, null, null, null)));
        assertThat(ActiveLoadDecoder.decode(hex("94 01 00 05 c0")))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1, 0, 5L, null, null, null)));
    }

    @Test
    void decodesAPositionalEnvelope() {
        String envelope = "95 ce001f3a4b 07 cf000001a0c4506c00 aa6b765f6d657472696373 c406 9501 00c0c0c0";
        byte[] frame = hex("01 " + String.format("%08x", hex(envelope).length) + envelope);

        Decoded<EventEnvelope> d = decoder.decode(zmtp(TOPIC, PUBLISHER, SEQUENCE, frame));

        assertThat(((Decoded.Ok<EventEnvelope>) d).value().payload()).isEqualTo(hex("9501 00c0c0c0"));
    }

    @Test
    void readsMapKeysInAnyOrderSkipsUnknownKeysAndDefaultsDpRank() {
        String l = "83 a5 6578747261 92 01 02"                            // extra: [1, 2], unknown
                + "ae6b765f757365645f626c6f636b73 0a"                      // kv_used_blocks: 10
                + "a9776f726b65725f6964 cfffffffffffffffff";              // worker_id: 2^64 - 1

        assertThat(ActiveLoadDecoder.decode(hex(l)))
                .isEqualTo(new Decoded.Ok<>(new ActiveLoad(-1L, 0, null, null, null, 10L)));
    }

    @Test
    void keepsPublisherIdsAboveTheSignedRangeExact() {
        byte[] payload = Fixtures.activeLoad(1, 0, null, 1L);
        long id = 0xF000_0000_0000_0001L;
        byte[][] parts = Fixtures.message(id, 3, payload);

        EventEnvelope e = ((Decoded.Ok<EventEnvelope>) decoder.decode(zmtp(parts))).value();

        assertThat(e.publisherId()).isEqualTo(id);
    }

    @Test
    void dropsMessagesWithoutFourPartsOrWithShortIdFramesAsMalformed() {
        assertThat(drop(zmtp(TOPIC, PUBLISHER, SEQUENCE))).isEqualTo(EventDrop.MALFORMED);
        assertThat(drop(zmtp(TOPIC, PUBLISHER, SEQUENCE, FRAME, FRAME))).isEqualTo(EventDrop.MALFORMED);
        assertThat(drop(zmtp(TOPIC, hex("1f3a4b"), SEQUENCE, FRAME))).isEqualTo(EventDrop.MALFORMED);
        assertThat(drop(zmtp(TOPIC, PUBLISHER, hex("07"), FRAME))).isEqualTo(EventDrop.MALFORMED);
    }

    @Test
    void dropsAnUnknownFrameVersion() {
        byte[] v2 = FRAME.clone();
        v2[0] = 2;

        assertThat(drop(zmtp(TOPIC, PUBLISHER, SEQUENCE, v2))).isEqualTo(EventDrop.UNKNOWN_VERSION);
    }

    @Test
    void dropsATopicThatOnlySharesThePrefixAndAMismatchedEnvelopeTopic() {
        byte[] longer = "kv_metrics_v2".getBytes(StandardCharsets.US_ASCII);
        assertThat(drop(zmtp(longer, PUBLISHER, SEQUENCE, FRAME))).isEqualTo(EventDrop.TOPIC_MISMATCH);

        byte[][] parts = Fixtures.message(2046539, 7, hex(ACTIVE_LOAD_MAP));
        parts[3] = Fixtures.frame(Fixtures.envelope(2046539, 7, "kv-events", hex(ACTIVE_LOAD_MAP)));
        assertThat(drop(zmtp(parts))).isEqualTo(EventDrop.TOPIC_MISMATCH);
    }

    @Test
    void refusesADeclaredPayloadAbove16KiBBeforeParsingIt() {
        // payload_len 16385 with garbage after it: oversized is decided from the header alone.
        byte[] frame = new byte[5 + 16_385];
        frame[0] = 1;
        frame[1] = 0;
        frame[2] = 0;
        frame[3] = 0x40;
        frame[4] = 0x01;
        java.util.Arrays.fill(frame, 5, frame.length, (byte) 0xc1); // 0xc1 is never valid msgpack

        assertThat(drop(zmtp(TOPIC, PUBLISHER, SEQUENCE, frame))).isEqualTo(EventDrop.OVERSIZED);
    }

    @Test
    void dropsAPayloadLengthThatDisagreesWithItsFrame() {
        byte[] frame = FRAME.clone();
        frame[4] = (byte) 0xa5;

        assertThat(drop(zmtp(TOPIC, PUBLISHER, SEQUENCE, frame))).isEqualTo(EventDrop.MALFORMED);
    }

    @Test
    void dropsFrameAndEnvelopePublishersThatDisagreeAsIdentityMismatch() {
        assertThat(drop(zmtp(TOPIC, hex("00000000001f3a4c"), SEQUENCE, FRAME))).isEqualTo(EventDrop.IDENTITY_MISMATCH);
    }

    @Test
    void dropsInvalidMsgpackAndWrongTypesAsMalformed() {
        assertThat(ActiveLoadDecoder.decode(hex("c1"))).isInstanceOf(Decoded.Dropped.class);
        assertThat(reason(ActiveLoadDecoder.decode(hex("81 a764705f72616e6b 02")))).isEqualTo(EventDrop.MALFORMED);
        assertThat(reason(ActiveLoadDecoder.decode(hex("92 01 02")))).isEqualTo(EventDrop.MALFORMED);
        assertThat(reason(ActiveLoadDecoder.decode(hex("95 ff 00 c0 c0 c0")))).isEqualTo(EventDrop.MALFORMED);
        assertThat(reason(ActiveLoadDecoder.decode(hex("95 01 ce00000001 c0 c0 a3616263 00")))).isEqualTo(EventDrop.MALFORMED);
        assertThat(reason(ActiveLoadDecoder.decode(hex("95 01 cf0000000100000000 c0 c0 c0")))).isEqualTo(EventDrop.MALFORMED);
        // A map that claims four billion entries in five bytes is refused from its header.
        assertThat(reason(ActiveLoadDecoder.decode(hex("dfffffffff")))).isEqualTo(EventDrop.MALFORMED);
        assertThat(reason(ActiveLoadDecoder.decode(hex(ACTIVE_LOAD_MAP + "00")))).isEqualTo(EventDrop.MALFORMED);
    }

    private EventDrop drop(dev.continuum.router.eventplane.zmtp.ZmtpMessage m) {
        return reason(decoder.decode(m));
    }

    private static EventDrop reason(Decoded<?> d) {
        assertThat(d).isInstanceOf(Decoded.Dropped.class);
        return ((Decoded.Dropped<?>) d).reason();
    }
}
