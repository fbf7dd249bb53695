package dev.continuum.router.proxy.ingress.responses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The chat-chunk to Responses-event conversion: what the ".done" events and the final response repeat, and bounds. */
class ResponsesStreamTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<JsonNode> run(String... data) throws Exception {
        ResponsesStream s = new ResponsesStream();
        StringBuilder all = new StringBuilder();
        ByteBuf out = ByteBufAllocator.DEFAULT.buffer();
        try {
            for (String d : data) {
                s.event(Unpooled.copiedBuffer(d, StandardCharsets.UTF_8), out);
            }
            s.end(out);
            all.append(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
        }
        List<JsonNode> events = new ArrayList<>();
        for (String e : all.toString().split("\n\n")) {
            String[] lines = e.split("\n");
            JsonNode d = JSON.readTree(lines[1].substring("data: ".length()));
            assertThat(lines[0]).isEqualTo("event: " + d.path("type").asText());
            events.add(d);
        }
        return events;
    }

    @Test
    void theFinalResponseRepeatsEveryItemAndSequenceNumbersCount() throws Exception {
        List<JsonNode> events = run(
                "{\"id\":\"c1\",\"created\":5,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"He\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"llo\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}",
                "[DONE]");
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).path("sequence_number").asInt()).isEqualTo(i);
        }
        assertThat(events).extracting(e -> e.path("type").asText()).containsExactly("response.created",
                "response.in_progress", "response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.output_item.added",
                "response.function_call_arguments.delta", "response.function_call_arguments.done",
                "response.output_item.done", "response.incomplete");
        JsonNode last = events.get(events.size() - 1).path("response");
        assertThat(last.path("id").asText()).isEqualTo("resp_c1");
        assertThat(last.path("status").asText()).isEqualTo("incomplete");
        assertThat(last.path("incomplete_details").path("reason").asText()).isEqualTo("max_output_tokens");
        assertThat(last.path("output").path(0).path("content").path(0).path("text").asText()).isEqualTo("Hello");
        assertThat(last.path("output").path(1).path("call_id").asText()).isEqualTo("call_1");
        assertThat(last.path("output").path(1).path("arguments").asText()).isEqualTo("{}");
        assertThat(last.path("usage").path("total_tokens").asInt()).isEqualTo(5);
        assertThat(events.get(6).path("text").asText()).isEqualTo("Hello");
    }

    @Test
    void tokensAreEscapedAsJsonFromDirectBuffersToo() throws Exception {
        String[] tokens = {"plain ", "quote \\\" and backslash \\\\ ", "line\\nbreak\\t", "caf\u00e9 \ud83d\ude00 ", "\\u0001"};
        ResponsesStream s = new ResponsesStream();
        StringBuilder all = new StringBuilder();
        ByteBuf out = ByteBufAllocator.DEFAULT.buffer();
        for (String t : tokens) {
            String data = "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + t + "\"}}]}";
            byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
            ByteBuf direct = ByteBufAllocator.DEFAULT.directBuffer(bytes.length).writeBytes(bytes);
            s.event(direct, out);
            direct.release();
        }
        s.end(out);
        all.append(out.toString(StandardCharsets.UTF_8));
        out.release();
        StringBuilder deltas = new StringBuilder();
        String done = null;
        for (String e : all.toString().split("\n\n")) {
            JsonNode d = JSON.readTree(e.split("\n")[1].substring("data: ".length()));
            if (d.path("type").asText().equals("response.output_text.delta")) {
                deltas.append(d.path("delta").asText());
            } else if (d.path("type").asText().equals("response.output_text.done")) {
                done = d.path("text").asText();
            }
        }
        String expected = "plain quote \" and backslash \\ line\nbreak\tcaf\u00e9 \ud83d\ude00 \u0001";
        assertThat(deltas.toString()).isEqualTo(expected);
        assertThat(done).isEqualTo(expected);
    }

    @Test
    void anUpstreamErrorBecomesAnErrorEventAndEndsTheStream() throws Exception {
        List<JsonNode> events = run("{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}",
                "{\"error\":{\"message\":\"engine died\"}}");
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.path("type").asText()).isEqualTo("error");
        assertThat(last.path("message").asText()).isEqualTo("engine died");
        assertThat(events).noneMatch(e -> e.path("type").asText().equals("response.completed"));
    }

    @Test
    void toolCallIndexesAreBounded() {
        assertThatThrownBy(() -> run("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}"))
                .isInstanceOf(IngressConverter.InvalidResponse.class);
    }
}
