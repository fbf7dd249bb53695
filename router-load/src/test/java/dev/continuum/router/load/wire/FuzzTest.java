package dev.continuum.router.load.wire;

import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.load.Fixtures;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpListener;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.eventplane.zmtp.ZmtpSubscriberHandler;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short, seeded fuzz run (a fixed number of cases, well under a few seconds): random and mutated valid
 * inputs through the frame, envelope and ActiveLoad decoders and the ZMTP handler. Nothing may escape as
 * an exception; every input ends as a value, a counted drop or a refusal.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FuzzTest {
    private static final int CASES = 20_000;
    private static final byte[] VALID_LOAD = Fixtures.hex(WireFixturesTest.ACTIVE_LOAD_MAP);
    private static final byte[][] VALID = Fixtures.message(2046539, 7, VALID_LOAD);

    private static byte[] mutate(byte[] in, Random r) {
        byte[] out = in.clone();
        switch (r.nextInt(5)) {
            case 0 -> out[r.nextInt(out.length)] ^= (byte) (1 << r.nextInt(8));
            case 1 -> out[r.nextInt(out.length)] = (byte) r.nextInt(256);
            case 2 -> out = Arrays.copyOf(out, r.nextInt(out.length + 1));
            case 3 -> {
                byte[] longer = Arrays.copyOf(out, out.length + 1 + r.nextInt(8));
                for (int i = out.length; i < longer.length; i++) {
                    longer[i] = (byte) r.nextInt(256);
                }
                out = longer;
            }
            default -> {
                int at = r.nextInt(out.length);
                out[at] = (byte) (0xc0 + r.nextInt(0x40)); // msgpack type bytes: containers, sizes, nil
            }
        }
        return out;
    }

    @Test
    void decodersNeverThrowOnRandomOrMutatedInput() {
        Random r = new Random(20260923);
        EventFrameDecoder frames = EventFrameDecoder.kvMetrics();
        int ok = 0;
        for (int i = 0; i < CASES; i++) {
            byte[][] parts = VALID.clone();
            if (r.nextBoolean()) {
                int p = r.nextInt(4);
                parts[p] = mutate(parts[p], r);
            } else {
                parts[3] = new byte[r.nextInt(64)];
                r.nextBytes(parts[3]);
            }
            Decoded<EventEnvelope> d = frames.decode(Fixtures.zmtp(parts));
            if (d instanceof Decoded.Ok<EventEnvelope> e) {
                ok++;
                assertThat(ActiveLoadDecoder.decode(e.value().payload())).isNotNull();
            }
            byte[] payload = r.nextInt(3) == 0 ? randomBytes(r) : mutate(VALID_LOAD, r);
            assertThat(ActiveLoadDecoder.decode(payload)).isNotNull();
        }
        assertThat(ok).isGreaterThan(0); // mutations that keep a valid message still decode
    }

    private static byte[] randomBytes(Random r) {
        byte[] b = new byte[r.nextInt(128)];
        r.nextBytes(b);
        return b;
    }

    @Test
    void theZmtpHandlerRefusesOrDeliversButNeverThrowsOnMutatedStreams() {
        Random r = new Random(42);
        byte[] topic = "kv_metrics".getBytes(StandardCharsets.US_ASCII);
        byte[] valid = dev.continuum.router.load.HostilePeerTestAccess.handshakeAndMessage(VALID);
        for (int i = 0; i < 2_000; i++) {
            int[] events = new int[3];
            ZmtpSubscriberHandler handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, topic, new ZmtpListener() {
                @Override
                public void onConnected() {
                    events[0]++;
                }

                @Override
                public void onMessage(ZmtpMessage message) {
                    events[1]++;
                }

                @Override
                public void onRefused(String reason) {
                    events[2]++;
                }
            });
            EmbeddedChannel ch = new EmbeddedChannel(handler);
            try {
                byte[] stream = mutate(valid, r);
                int at = 0;
                while (at < stream.length && ch.isOpen()) { // a closed socket delivers no more reads
                    int n = 1 + r.nextInt(Math.min(64, stream.length - at));
                    ch.writeInbound(Unpooled.wrappedBuffer(stream, at, n));
                    at += n;
                }
                ch.checkException();
                assertThat(events[2]).isLessThanOrEqualTo(1);
                assertThat(handler.retainedBufferBytes()).isLessThanOrEqualTo(ZmtpLimits.KV_METRICS.maxMessageBytes());
            } finally {
                ch.finishAndReleaseAll();
            }
        }
    }
}
