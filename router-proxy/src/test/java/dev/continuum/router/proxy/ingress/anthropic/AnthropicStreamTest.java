package dev.continuum.router.proxy.ingress.anthropic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.ingress.ChatStreamConverter;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chat-chunk to Anthropic-event conversion, event by event, with its edge cases and bounds. */
class AnthropicStreamTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

    /** Feeds {@code data} events and the end; returns "event name data" strings. */
    private static List<String> run(IngressConverter.StreamConverter s, String... data) throws Exception {
        StringBuilder all = new StringBuilder();
        ByteBuf out = ALLOC.buffer();
        try {
            for (String d : data) {
                s.event(Unpooled.copiedBuffer(d, StandardCharsets.UTF_8), out);
            }
            s.end(out);
            all.append(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
        }
        List<String> events = new ArrayList<>();
        for (String e : all.toString().split("\n\n")) {
            String[] lines = e.split("\n");
            assertThat(lines).hasSize(2);
            String name = lines[0].substring("event: ".length());
            JsonNode d = JSON.readTree(lines[1].substring("data: ".length()));
            assertThat(d.path("type").asText()).isEqualTo(name);
            events.add(name + " " + d);
        }
        return events;
    }

    @Test
    void textThenToolCallsBecomeBlocksInOrderWithStopReasonAndUsage() throws Exception {
        List<String> events = run(new AnthropicStream(),
                "{\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"t2\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}",
                "[DONE]");
        assertThat(events).containsExactly(
                "message_start {\"type\":\"message_start\",\"message\":{\"id\":\"msg_c1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}",
                "ping {\"type\":\"ping\"}",
                "content_block_start {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
                "content_block_delta {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}",
                "content_block_stop {\"type\":\"content_block_stop\",\"index\":0}",
                "content_block_start {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}",
                "content_block_delta {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\"\"}}",
                "content_block_delta {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\":1}\"}}",
                "content_block_stop {\"type\":\"content_block_stop\",\"index\":1}",
                "content_block_start {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"g\",\"input\":{}}}",
                "content_block_delta {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}",
                "content_block_stop {\"type\":\"content_block_stop\",\"index\":2}",
                "message_delta {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":7,\"output_tokens\":3}}",
                "message_stop {\"type\":\"message_stop\"}");
    }

    @Test
    void aMatchedStopSequenceIsNamedAndAStreamWithoutDoneStillEnds() throws Exception {
        List<String> events = run(new AnthropicStream(),
                "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\",\"stop_reason\":\"END\"}]}");
        assertThat(events.get(events.size() - 2)).contains("\"stop_reason\":\"stop_sequence\",\"stop_sequence\":\"END\"");
        assertThat(events.get(events.size() - 1)).startsWith("message_stop");
    }

    @Test
    void anUpstreamErrorEventEndsTheStreamAsAnAnthropicError() throws Exception {
        List<String> events = run(new AnthropicStream(),
                "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}",
                "{\"error\":{\"message\":\"engine died\",\"code\":\"boom\"}}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"late\"}}]}");
        assertThat(events.get(events.size() - 1)).isEqualTo("error {\"type\":\"error\",\"error\":"
                + "{\"type\":\"api_error\",\"message\":\"engine died Error code: boom\"}}");
        assertThat(events).noneMatch(e -> e.contains("late") || e.startsWith("message_stop"));
    }

    @Test
    void toolCallIndexesAreBoundedAndInterleavedFragmentsRefused() {
        assertThatThrownBy(() -> run(new AnthropicStream(), "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
                + "[{\"index\":" + ChatStreamConverter.MAX_TOOL_CALLS + ",\"id\":\"t\"}]}}]}"))
                .isInstanceOf(IngressConverter.InvalidResponse.class);
        assertThatThrownBy(() -> run(new AnthropicStream(),
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\"}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\"}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"x\"}}]}}]}"))
                .isInstanceOf(IngressConverter.InvalidResponse.class);
    }
}
