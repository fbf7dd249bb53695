package dev.continuum.router.eventbus;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The bounded SSE parser: line endings, fields, comments, split input and oversized events. */
class SseParserTest {
    private final List<String> seen = new ArrayList<>();
    private int oversized;
    private final SseParser parser = new SseParser(64, new SseParser.Listener() {
        @Override
        public void event(@Nullable String id, String type, String data) {
            seen.add(id + "|" + type + "|" + data);
        }

        @Override
        public void oversized() {
            oversized++;
        }
    });

    private void feed(String text) {
        ByteBuf b = Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
        parser.feed(b);
        assertThat(b.isReadable()).isFalse();
        b.release();
    }

    @Test
    void parsesEveryLineEndingAndJoinsDataLines() {
        feed(": comment\n\nid: 1\ndata: a\n\r\nid:2\r\nevent: kv\r\ndata: b\r\ndata:c\r\r");
        feed("data: no id\n\n");
        assertThat(seen).containsExactly("1|message|a", "2|kv|b\nc", "null|message|no id");
    }

    @Test
    void anEventSplitAcrossReadsIsWhole() {
        feed("id: 7\nda");
        feed("ta: {\"x\":1}\r");
        feed("\n\r\n");
        assertThat(seen).containsExactly("7|message|{\"x\":1}");
    }

    @Test
    void anOversizedEventIsSkippedAndTheStreamGoesOn() {
        feed("id: 1\ndata: " + "x".repeat(100) + "\ndata: more\n\nid: 2\ndata: ok\n\n");
        assertThat(oversized).isEqualTo(1);
        assertThat(seen).containsExactly("2|message|ok");
    }
}
