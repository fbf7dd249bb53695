package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventDrop;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.MsgpackCursor;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.wire.WireException;
import static dev.continuum.router.load.Fixtures.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-place string comparison and the reused cursor behind the decoders. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MsgpackCursorTest {
    private static final byte[] A = EventFrameDecoder.ascii("topic");
    private static final byte[] B = EventFrameDecoder.ascii("payload");

    @Test
    void comparesFixstrStr8AndStr16InPlaceAndConsumesTheString() throws WireException {
        // "payload" as fixstr, as str 8 and as str 16, each followed by the integer 7
        for (String encoded : new String[] {"a7 7061796c6f6164 07", "d9 07 7061796c6f6164 07",
            "da 0007 7061796c6f6164 07"}) {
            byte[] bytes = hex("ff" + encoded + "ff"); // bytes either side that are not part of the value
            MsgpackCursor c = new MsgpackCursor().reset(bytes, 1, bytes.length - 2);

            assertThat(c.stringIndex(A, B)).as(encoded).isEqualTo(1);
            assertThat(c.unsigned64()).isEqualTo(7);
            assertThat(c.remaining()).isZero();
        }
    }

    @Test
    void aStringThatMatchesNoCandidateOrOnlyAPrefixIsMinusOne() throws WireException {
        byte[] bytes = hex("a3 746f70 a6 746f70696373"); // "top", "topics"
        MsgpackCursor c = new MsgpackCursor().reset(bytes, 0, bytes.length);

        assertThat(c.stringIndex(A, B)).isEqualTo(-1);
        assertThat(c.stringIndex(A, B)).isEqualTo(-1);
        assertThat(c.remaining()).isZero();
    }

    @Test
    void aStringLongerThanTheBytesLeftIsMalformedEvenWithBytesAfterTheValue() {
        byte[] bytes = hex("a7 7061796c 6f6164"); // 7 declared, 4 inside the value; 3 more outside it
        MsgpackCursor c = new MsgpackCursor().reset(bytes, 0, 5);

        assertThatThrownBy(() -> c.stringIndex(A, B)).isInstanceOf(WireException.class)
                .extracting(e -> ((WireException) e).drop()).isEqualTo(EventDrop.MALFORMED);
    }

    @Test
    void aResetCursorStartsOverAfterAFailure() throws WireException {
        MsgpackCursor c = new MsgpackCursor();
        byte[] bad = hex("c1");
        c.reset(bad, 0, bad.length);
        assertThatThrownBy(c::nextType).isInstanceOf(WireException.class);

        byte[] good = hex("a5 746f706963");
        c.reset(good, 0, good.length);
        assertThat(c.stringIndex(A, B)).isZero();
        assertThat(c.remaining()).isZero();
    }

    @Test
    void decodersGiveTheSameResultsWhenCalledRepeatedlyOnOneThread() {
        EventFrameDecoder decoder = EventFrameDecoder.kvMetrics();
        var good = dev.continuum.router.load.Fixtures.zmtp(WireFixturesTest.TOPIC, WireFixturesTest.PUBLISHER,
                WireFixturesTest.SEQUENCE, WireFixturesTest.FRAME);
        byte[] truncated = java.util.Arrays.copyOf(WireFixturesTest.FRAME, WireFixturesTest.FRAME.length - 1);
        for (int i = 0; i < 3; i++) {
            Decoded<EventEnvelope> ok = decoder.decode(good);
            assertThat(ok).isInstanceOf(Decoded.Ok.class);
            assertThat(((Decoded.Ok<EventEnvelope>) ok).value().topic()).isEqualTo("kv_metrics");
            assertThat(decoder.decode(dev.continuum.router.load.Fixtures.zmtp(WireFixturesTest.TOPIC,
                    WireFixturesTest.PUBLISHER, WireFixturesTest.SEQUENCE, truncated)))
                    .isInstanceOf(Decoded.Dropped.class);
            assertThat(ActiveLoadDecoder.decode(hex(WireFixturesTest.ACTIVE_LOAD_MAP)))
                    .isEqualTo(new Decoded.Ok<>(new ActiveLoad(1736491, 2, null, null, null, 1200L)));
        }
    }
}
