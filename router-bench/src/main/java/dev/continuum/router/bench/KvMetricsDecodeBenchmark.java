package dev.continuum.router.bench;

import dev.continuum.router.load.wire.ActiveLoad;
import dev.continuum.router.load.wire.ActiveLoadDecoder;
import dev.continuum.router.eventplane.wire.Decoded;
import dev.continuum.router.eventplane.wire.EventEnvelope;
import dev.continuum.router.eventplane.wire.EventFrameDecoder;
import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import dev.continuum.router.eventplane.zmtp.ZmtpListener;
import dev.continuum.router.eventplane.zmtp.ZmtpMessage;
import dev.continuum.router.eventplane.zmtp.ZmtpSubscriberHandler;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The ZMTP frame + msgpack decode path of one kv_metrics message, without the store:
 * <ul>
 *   <li>{@code zmtpFramesAndDecode}: the message's socket bytes (4 frames, 225 bytes) through the router's
 *       ZMTP SUB client ({@code ZmtpSubscriberHandler}, after a real handshake) into a listener that decodes
 *       what KvMetricsSubscription decodes: the frames and EventEnvelope ({@code EventFrameDecoder}), then
 *       the ActiveLoad payload ({@code ActiveLoadDecoder});</li>
 *   <li>{@code msgpackDecodeOnly}: the two decoders alone over an assembled message.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class KvMetricsDecodeBenchmark {
    private final EventFrameDecoder frames = EventFrameDecoder.kvMetrics();
    private EmbeddedChannel channel;
    private KvMetricsWire wire;
    private ZmtpMessage assembled;
    private @Nullable Decoded<ActiveLoad> last; // the listener's latest decode; none before the first message
    private long decoded;

    @Setup
    public void setup() {
        wire = KvMetricsWire.message(KvMetricsFeed.PUBLISHER, 1, 0x7a00_0000_0000_1000L, 3, 412, 2_048);
        ZmtpListener listener = new ZmtpListener() {
            @Override
            public void onConnected() {
            }

            @Override
            public void onMessage(ZmtpMessage message) {
                last = decode(message);
                decoded++;
            }

            @Override
            public void onRefused(String reason) {
                throw new IllegalStateException("refused: " + reason);
            }
        };
        channel = new EmbeddedChannel(new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS,
                KvMetricsWire.TOPIC.getBytes(StandardCharsets.US_ASCII), listener));
        channel.writeInbound(Unpooled.wrappedBuffer(KvMetricsWire.pubHandshake()));
        channel.pipeline().fireChannelRead(Unpooled.wrappedBuffer(wire.bytes));
        if (decoded != 1 || !(last instanceof Decoded.Ok<ActiveLoad>)) {
            throw new IllegalStateException("the message was not delivered");
        }
        assembled = new ArrayMessage(wire);
        if (!(decode(assembled) instanceof Decoded.Ok<ActiveLoad> ok) || ok.value().dpRank() != 3) {
            throw new IllegalStateException("decode failed: " + decode(assembled));
        }
    }

    @TearDown
    public void tearDown() {
        channel.finishAndReleaseAll();
    }

    private Decoded<ActiveLoad> decode(ZmtpMessage message) {
        Decoded<EventEnvelope> envelope = frames.decode(message);
        if (!(envelope instanceof Decoded.Ok<EventEnvelope> ok)) {
            throw new IllegalStateException("dropped: " + envelope);
        }
        return ActiveLoadDecoder.decode(ok.value().payload());
    }

    @Benchmark
    public void zmtpFramesAndDecode(Blackhole bh) {
        channel.pipeline().fireChannelRead(Unpooled.wrappedBuffer(wire.bytes));
        bh.consume(last);
    }

    @Benchmark
    public void msgpackDecodeOnly(Blackhole bh) {
        bh.consume(decode(assembled));
    }

    /** The message's four frame bodies in one array, as the ZMTP client hands them over. */
    private static final class ArrayMessage implements ZmtpMessage {
        private final byte[] array;
        private final int[] offsets = new int[4];
        private final int[] lengths = new int[4];

        ArrayMessage(KvMetricsWire wire) {
            byte[] w = wire.bytes;
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            int at = 0;
            for (int part = 0; part < 4; part++) {
                int flags = w[at++] & 0xFF;
                long size;
                if ((flags & 0x02) != 0) {
                    size = java.nio.ByteBuffer.wrap(w, at, 8).getLong();
                    at += 8;
                } else {
                    size = w[at++] & 0xFF;
                }
                offsets[part] = out.size();
                lengths[part] = (int) size;
                out.write(w, at, (int) size);
                at += (int) size;
            }
            array = out.toByteArray();
        }

        @Override
        public int parts() {
            return 4;
        }

        @Override
        public byte[] array() {
            return array;
        }

        @Override
        public int offset(int part) {
            return offsets[part];
        }

        @Override
        public int length(int part) {
            return lengths[part];
        }
    }
}
