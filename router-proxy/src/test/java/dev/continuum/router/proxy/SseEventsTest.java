package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseEventsTest {
    private static final String STREAM = "data: {\"n\":1}\n\n"
            + ": a comment\r\nevent: delta\r\ndata:{\"n\":2}\r\n\r\n"
            + "data: line one\ndata: line two\nid: 7\n\n"
            + "data: [DONE]\n\n";
    private static final List<String> EVENTS = List.of("{\"n\":1}", "{\"n\":2}", "line one\nline two", "[DONE]");

    private static List<String> split(byte[] bytes, int... cuts) throws Exception {
        List<String> out = new ArrayList<>();
        SseEvents events = new SseEvents(ByteBufAllocator.DEFAULT);
        try {
            int from = 0;
            for (int cut : cuts) {
                feed(events, bytes, from, cut, out);
                from = cut;
            }
            feed(events, bytes, from, bytes.length, out);
            events.finish(d -> out.add(d.toString(StandardCharsets.UTF_8)));
        } finally {
            events.close();
        }
        return out;
    }

    private static void feed(SseEvents events, byte[] bytes, int from, int to, List<String> out) throws Exception {
        ByteBuf chunk = Unpooled.wrappedBuffer(bytes, from, to - from);
        try {
            events.feed(chunk, d -> out.add(d.toString(StandardCharsets.UTF_8)));
        } finally {
            chunk.release();
        }
    }

    @Test
    void splitsEventsWhereverTheChunksAreCut() throws Exception {
        byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
        assertThat(split(bytes)).isEqualTo(EVENTS);
        for (int i = 0; i <= bytes.length; i++) {
            for (int j = i; j <= bytes.length; j += 7) {
                assertThat(split(bytes, i, j)).as("cut at %d and %d", i, j).isEqualTo(EVENTS);
            }
        }
    }

    @Test
    void anUnterminatedLastEventStillCounts() throws Exception {
        assertThat(split("data: a\n\ndata: b".getBytes(StandardCharsets.UTF_8))).containsExactly("a", "b");
    }

    @Test
    void refusesAnEventOverTheBoundBeforeItEnds() {
        byte[] big = new byte[IngressConverter.MAX_EVENT_BYTES / 2];
        java.util.Arrays.fill(big, (byte) 'x');
        SseEvents events = new SseEvents(ByteBufAllocator.DEFAULT);
        try {
            assertThatThrownBy(() -> {
                for (int i = 0; i < 3; i++) {
                    ByteBuf chunk = Unpooled.wrappedBuffer(i == 0 ? "data: ".getBytes(StandardCharsets.UTF_8) : big);
                    try {
                        events.feed(chunk, d -> { });
                    } finally {
                        chunk.release();
                    }
                }
                ByteBuf more = Unpooled.wrappedBuffer(big);
                try {
                    events.feed(more, d -> { });
                } finally {
                    more.release();
                }
            }).isInstanceOf(IngressConverter.InvalidResponse.class);
        } finally {
            events.close();
        }
    }
}
