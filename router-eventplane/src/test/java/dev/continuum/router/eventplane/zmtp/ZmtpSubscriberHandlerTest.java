package dev.continuum.router.eventplane.zmtp;

import static dev.continuum.router.eventplane.zmtp.PeerBytes.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ZmtpSubscriberHandlerTest {
    private static final byte[] TOPIC = "kv_metrics".getBytes(StandardCharsets.US_ASCII);

    private final RecordingListener listener = new RecordingListener();
    private ZmtpSubscriberHandler handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);

    private EmbeddedChannel channel() {
        return new EmbeddedChannel(handler);
    }

    private static String written(EmbeddedChannel ch) {
        StringBuilder sb = new StringBuilder();
        ByteBuf b;
        while ((b = ch.readOutbound()) != null) {
            sb.append(ByteBufUtil.hexDump(b));
            b.release();
        }
        return sb.toString();
    }

    @Test
    void greetsAsA30NullClientThenSendsReadyAsSubThenSubscribesToTheBareTopic() {
        EmbeddedChannel ch = channel();
        assertThat(written(ch)).isEqualTo("ff00000000000000007f" + "0300" + "4e554c4c" + "00".repeat(16) + "00"
                + "00".repeat(31));

        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.greeting()));
        // READY: command flag, size 25, name "READY", property "Socket-Type" = "SUB".
        assertThat(written(ch)).isEqualTo("0419" + "05" + "5245414459" + "0b" + "536f636b65742d54797065"
                + "00000003" + "535542");

        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.ready("PUB")));
        // ZMTP 3.0 subscription: a message frame of 0x01 + "kv_metrics".
        assertThat(written(ch)).isEqualTo("000b" + "01" + "6b765f6d657472696373");
        assertThat(listener.connected).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void assemblesMultipartMessagesFedOneByteAtATimeAndSplitAtEveryOffset() {
        byte[] body = new byte[300]; // a long frame
        java.util.Arrays.fill(body, (byte) 7);
        byte[] stream = PeerBytes.concat(PeerBytes.handshake(),
                PeerBytes.message(TOPIC, hex("0000000000000001"), body),
                PeerBytes.message(TOPIC, new byte[0]));
        for (int split = 1; split < stream.length; split++) {
            RecordingListener l = new RecordingListener();
            handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, l);
            EmbeddedChannel ch = channel();
            ch.writeInbound(Unpooled.wrappedBuffer(stream, 0, split));
            ch.writeInbound(Unpooled.wrappedBuffer(stream, split, stream.length - split));

            assertThat(l.messages).hasSize(2);
            assertThat(l.messages.get(0).get(2)).isEqualTo(body);
            assertThat(l.messages.get(1).get(1)).isEmpty();
            assertThat(l.refusals).isEmpty();
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void accepts30And31PeersAndXpubAndIgnoresOtherMetadataCaseInsensitively() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.concat(PeerBytes.greeting(3, 0, "NULL"),
                PeerBytes.command("READY", PeerBytes.concat(PeerBytes.property("Identity", ""),
                        PeerBytes.property("socket-type", "XPUB"))))));

        assertThat(listener.connected).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void answersPingWithPongCarryingItsContext() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.handshake()));
        written(ch);

        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.command("PING", hex("0064 616263"))));

        assertThat(written(ch)).isEqualTo("0408" + "04" + "504f4e47" + "616263");
        assertThat(ch.isActive()).isTrue();
        ch.finishAndReleaseAll();
    }

    @Test
    void returnsToItsInitialBufferAfterALargeMessage() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.handshake()));
        assertThat(handler.retainedBufferBytes()).isEqualTo(ZmtpLimits.INITIAL_BUFFER_BYTES);

        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.message(TOPIC, new byte[10_000])));

        assertThat(listener.messages).hasSize(1);
        assertThat(handler.retainedBufferBytes()).isEqualTo(ZmtpLimits.INITIAL_BUFFER_BYTES);
        ch.finishAndReleaseAll();
    }

    private void assertRefused(byte[] stream, String reasonStart) {
        EmbeddedChannel ch = channel();
        try {
            ch.writeInbound(Unpooled.wrappedBuffer(stream));

            assertThat(listener.refusals).hasSize(1);
            assertThat(listener.refusals.get(0)).startsWith(reasonStart);
            assertThat(ch.isOpen()).isFalse();
            assertThat(handler.retainedBufferBytes()).isLessThanOrEqualTo(ZmtpLimits.INITIAL_BUFFER_BYTES);
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void refusesAWrongSignatureAtItsFirstByte() {
        assertRefused(hex("47455420"), "greeting signature"); // "GET ": an HTTP client, not a ZMTP peer
    }

    @Test
    void refusesZmtp1And2PeersAndOtherMechanisms() {
        assertRefused(PeerBytes.greeting(2, 0, "NULL"), "greeting version 2");
        listener.refusals.clear();
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);
        assertRefused(PeerBytes.greeting(3, 0, "CURVE"), "greeting mechanism");
    }

    @Test
    void refusesA64BitFrameSizeWithTheTopBitSetWithoutAllocating() {
        // 2^63 reads as a negative long: refused from the size bytes alone.
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), hex("02 8000000000000000")), "frame size 9223372036854775808");
    }

    @Test
    void refusesAFrameOneByteAboveTheLimit() {
        long size = ZmtpLimits.KV_METRICS.maxFrameBytes() + 1L;
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), hex("02"), ByteBuffer.allocate(8).putLong(size).array()),
                "frame size " + size);
    }

    @Test
    void acceptsAFrameExactlyAtTheLimit() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.concat(PeerBytes.handshake(),
                PeerBytes.message(new byte[ZmtpLimits.KV_METRICS.maxFrameBytes()]))));

        assertThat(listener.messages).hasSize(1);
        assertThat(listener.refusals).isEmpty();
        ch.finishAndReleaseAll();
    }

    @Test
    void refusesMorePartsThanTheLimit() {
        byte[][] parts = new byte[ZmtpLimits.KV_METRICS.maxPartsPerMessage() + 1][];
        java.util.Arrays.fill(parts, new byte[1]);
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), PeerBytes.message(parts)), "parts per message");
    }

    @Test
    void refusesAMessageWhosePartsTogetherExceedTheMessageLimit() {
        byte[] big = new byte[ZmtpLimits.KV_METRICS.maxFrameBytes()];
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), PeerBytes.message(big, big, big)), "message bytes");
    }

    @Test
    void refusesEndlessMetadataByCountAndByCommandSize() {
        byte[][] props = new byte[ZmtpLimits.MAX_METADATA_PROPERTIES + 1][];
        for (int i = 0; i < props.length; i++) {
            props[i] = PeerBytes.property("X-" + i, "v");
        }
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), PeerBytes.command("READY", PeerBytes.concat(props))),
                "metadata properties");

        listener.refusals.clear();
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), hex("06 00000000ffffffff")), "command size 4294967295");
    }

    @Test
    void refusesAMetadataValueLengthThatRunsPastTheCommand() {
        byte[] lying = hex("0b 536f636b65742d54797065 7fffffff 505542");
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), PeerBytes.command("READY", lying)), "metadata value length");
    }

    @Test
    void refusesAPeerThatIsNotAPublisherOrSendsMessagesBeforeReady() {
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), PeerBytes.ready("REQ")), "peer socket type");
        listener.refusals.clear();
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), PeerBytes.message(TOPIC)), "message frame before READY");
    }

    @Test
    void refusesReservedFlagBitsAndMultipartCommands() {
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), hex("10 00")), "frame flags");
        listener.refusals.clear();
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), hex("05 00")), "command frame with MORE");
    }

    @Test
    void refusesAnErrorCommandAndAnOversizedPingContext() {
        assertRefused(PeerBytes.concat(PeerBytes.greeting(), PeerBytes.command("ERROR", hex("03 626164"))),
                "peer sent ERROR");
        listener.refusals.clear();
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS, TOPIC, listener);
        assertRefused(PeerBytes.concat(PeerBytes.handshake(), PeerBytes.command("PING", new byte[2 + 17])), "PING body");
    }

    @Test
    void refusesAGreetingThatDoesNotFinishInTime() {
        handler = new ZmtpSubscriberHandler(ZmtpLimits.KV_METRICS.withHandshakeTimeout(Duration.ofMillis(50)), TOPIC,
                listener);
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(hex("ff0000")));

        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            ch.runPendingTasks();
            assertThat(listener.refusals).containsExactly("handshake timeout");
        });
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void discardsBytesAfterARefusalAndReportsOnce() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(Unpooled.wrappedBuffer(PeerBytes.concat(hex("00"), PeerBytes.handshake())));

        assertThat(listener.refusals).hasSize(1);
        assertThat(listener.connected).isZero();
        ch.finishAndReleaseAll();
    }
}
