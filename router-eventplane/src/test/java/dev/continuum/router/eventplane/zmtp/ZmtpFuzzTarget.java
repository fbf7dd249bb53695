package dev.continuum.router.eventplane.zmtp;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Coverage-guided fuzzing of the ZMTP subscriber (docs/testing.md, "Fuzzing"): the fuzzer's bytes are what a
 * publisher sends, after a valid greeting and READY or from the first byte, cut into reads of fuzzed sizes.
 * Small bounds, so every limit is within the fuzzer's reach.
 *
 * <p>The contract checked: nothing escapes the handler; a peer is refused at most once and nothing is
 * delivered after it; every delivered message stays within its part, frame and message bounds, with views
 * inside the array; the assembly array never grows past the message bound and is back to its idle size once
 * the channel goes; every inbound buffer is released; and no write is larger than the greeting. Netty's
 * paranoid leak detection (on for every test) reports any buffer left unreleased.
 */
class ZmtpFuzzTarget {
    private static final ZmtpLimits LIMITS = new ZmtpLimits(512, 3, 1024, 128, 4, Duration.ofSeconds(10));
    private static final byte[] TOPIC = "kv_metrics".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HANDSHAKE = PeerBytes.handshake();

    @FuzzTest(maxDuration = "10s")
    void everyStreamIsDeliveredWithinBoundsOrRefusedOnce(FuzzedDataProvider data) {
        boolean handshake = data.consumeBoolean();
        int[] refusals = {0};
        boolean[] refused = {false};
        ZmtpSubscriberHandler handler = new ZmtpSubscriberHandler(LIMITS, TOPIC, new ZmtpListener() {
            @Override
            public void onConnected() {
                assertThat(refused[0]).isFalse();
            }

            @Override
            public void onMessage(ZmtpMessage message) {
                assertThat(refused[0]).as("a message after the refusal").isFalse();
                assertThat(message.parts()).isBetween(1, LIMITS.maxPartsPerMessage());
                int end = 0;
                for (int i = 0; i < message.parts(); i++) {
                    assertThat(message.offset(i)).isEqualTo(end);
                    assertThat(message.length(i)).isBetween(0, LIMITS.maxFrameBytes());
                    end = message.offset(i) + message.length(i);
                }
                assertThat(end).isLessThanOrEqualTo(Math.min(LIMITS.maxMessageBytes(), message.array().length));
            }

            @Override
            public void onRefused(String reason) {
                refusals[0]++;
                refused[0] = true;
            }
        });
        EmbeddedChannel channel = new EmbeddedChannel(handler);
        try {
            byte[] stream = data.consumeRemainingAsBytes();
            if (handshake) {
                feed(channel, handler, HANDSHAKE, 0, HANDSHAKE.length);
            }
            int at = 0;
            int seed = stream.length == 0 ? 1 : stream[0] & 0x3F;
            while (at < stream.length && channel.isOpen()) {
                int n = Math.min(stream.length - at, 1 + (seed * 31 + at) % 97); // varied read sizes, replayable
                feed(channel, handler, stream, at, n);
                at += n;
            }
            channel.checkException();
            assertThat(refusals[0]).isLessThanOrEqualTo(1);
            if (refused[0]) {
                assertThat(channel.isOpen()).isFalse();
            }
            for (Object out; (out = channel.readOutbound()) != null; ) {
                ByteBuf write = (ByteBuf) out;
                try {
                    assertThat(write.readableBytes()).isLessThanOrEqualTo(ZmtpLimits.GREETING_BYTES);
                } finally {
                    write.release();
                }
            }
        } finally {
            channel.finishAndReleaseAll();
        }
        assertThat(handler.retainedBufferBytes()).isEqualTo(ZmtpLimits.INITIAL_BUFFER_BYTES);
    }

    private static void feed(EmbeddedChannel channel, ZmtpSubscriberHandler handler, byte[] bytes, int from, int n) {
        ByteBuf read = Unpooled.copiedBuffer(bytes, from, n);
        channel.writeInbound(read);
        assertThat(read.refCnt()).as("an inbound buffer the handler did not release").isZero();
        assertThat(handler.retainedBufferBytes()).isLessThanOrEqualTo(LIMITS.maxMessageBytes());
    }
}
