package dev.continuum.router.proxy.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.proxy.ingress.anthropic.AnthropicConverter;
import dev.continuum.router.proxy.ingress.responses.ResponsesConverter;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Tool definitions of both wires through their converters: function tools become chat tools field by field, and a
 * tool the router cannot offer (web search above all) is refused with its path and the reason instead of being
 * dropped from the request.
 */
class ToolDefinitionsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode convert(IngressConverter c, String body) throws Exception {
        ByteBuf out = c.toChatRequest(Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), ByteBufAllocator.DEFAULT);
        try {
            return JSON.readTree(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
        }
    }

    private static final String MESSAGES = "\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    @Test
    void anthropicCustomToolsBecomeFunctions() throws Exception {
        JsonNode chat = convert(new AnthropicConverter(), "{" + MESSAGES + ",\"tools\":["
                + "{\"name\":\"get_weather\",\"description\":\"Weather\",\"input_schema\":{\"type\":\"object\"}},"
                + "{\"type\":\"custom\",\"name\":\"lookup\",\"input_schema\":{\"type\":\"object\"},\"strict\":true}],"
                + "\"tool_choice\":{\"type\":\"tool\",\"name\":\"lookup\"}}");
        assertThat(chat.path("tools")).isEqualTo(JSON.readTree("[{\"type\":\"function\",\"function\":{\"name\":"
                + "\"get_weather\",\"description\":\"Weather\",\"parameters\":{\"type\":\"object\"}}},{\"type\":\"function\","
                + "\"function\":{\"name\":\"lookup\",\"parameters\":{\"type\":\"object\"},\"strict\":true}}]"));
        assertThat(chat.path("tool_choice")).isEqualTo(JSON.readTree(
                "{\"type\":\"function\",\"function\":{\"name\":\"lookup\"}}"));
    }

    @Test
    void anthropicServerToolsAreRefusedWithTheReason() {
        for (String type : new String[] {"web_search_20250305", "web_fetch_20250910", "bash_20250124"}) {
            assertThatThrownBy(() -> convert(new AnthropicConverter(), "{" + MESSAGES + ",\"tools\":["
                    + "{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}},{\"type\":\"" + type + "\",\"name\":\"x\"}]}"))
                    .isInstanceOf(IngressConverter.InvalidRequest.class)
                    .hasMessageStartingWith("tools.1.type: '" + type + "' is not supported: ")
                    .hasMessageContaining("runs none of them");
        }
        assertThatThrownBy(() -> convert(new AnthropicConverter(), "{" + MESSAGES + ",\"tools\":[{\"name\":\"f\"}]}"))
                .hasMessage("tools.0.input_schema: Field required (an object).");
    }

    @Test
    void responsesFunctionToolsConvertAndHostedToolsAreRefused() throws Exception {
        JsonNode chat = convert(new ResponsesConverter(), "{\"model\":\"m\",\"input\":\"hi\",\"tools\":[{\"type\":"
                + "\"function\",\"name\":\"f\",\"parameters\":{\"type\":\"object\"},\"strict\":false}],\"tool_choice\":\"required\"}");
        assertThat(chat.path("tools")).isEqualTo(JSON.readTree("[{\"type\":\"function\",\"function\":{\"name\":\"f\","
                + "\"parameters\":{\"type\":\"object\"},\"strict\":false}}]"));
        assertThat(chat.path("tool_choice").asText()).isEqualTo("required");
        assertThatThrownBy(() -> convert(new ResponsesConverter(), "{\"model\":\"m\",\"input\":\"hi\",\"tools\":"
                + "[{\"type\":\"web_search\"}]}"))
                .isInstanceOf(IngressConverter.InvalidRequest.class)
                .hasMessageStartingWith("tools.0.type: 'web_search' is not supported: ");
        assertThatThrownBy(() -> convert(new ResponsesConverter(), "{\"model\":\"m\",\"input\":\"hi\",\"tools\":"
                + "[{\"name\":\"f\"}]}"))
                .hasMessageStartingWith("tools.0.type: '' is not supported: ");
    }
}
