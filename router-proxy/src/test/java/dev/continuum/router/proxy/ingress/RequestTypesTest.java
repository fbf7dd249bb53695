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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every request field docs/ingresses.md lists is checked for its type on both converted wires: a wrong type is the
 * request's 400 whose message starts with the field's path, never a request converted as if the field were absent;
 * a body with bytes after its JSON value, or nested deeper than the bound, is refused. Valid values of the same
 * fields (null included, which the SDKs send for "not given") still convert.
 */
class RequestTypesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MESSAGES = "\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    private static final String INPUT = "\"model\":\"m\",\"input\":\"hi\"";
    private static final String TOOL = "{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}";
    private static final String FUNCTION = "{\"type\":\"function\",\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}";

    private static JsonNode convert(IngressConverter c, String body) throws Exception {
        ByteBuf out = c.toChatRequest(Unpooled.copiedBuffer(body, StandardCharsets.UTF_8), ByteBufAllocator.DEFAULT);
        try {
            return JSON.readTree(out.toString(StandardCharsets.UTF_8));
        } finally {
            out.release();
        }
    }

    private static String user(String block) {
        return "\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":[" + block + "]}]";
    }

    private static String assistant(String block) {
        return "\"model\":\"m\",\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
                + "{\"role\":\"assistant\",\"content\":[" + block + "]}]";
    }

    static Stream<Arguments> anthropicWrongTypes() {
        return Stream.of(
                Arguments.of(user("{\"type\":\"text\",\"text\":5}"), "messages.0.content.0.text: expected a string."),
                Arguments.of(assistant("{\"type\":\"text\",\"text\":[]}"), "messages.1.content.0.text: expected a string."),
                Arguments.of(user("5"), "messages.0.content.0: expected an object."),
                Arguments.of(MESSAGES + ",\"tools\":{}", "tools: expected an array."),
                Arguments.of(MESSAGES + ",\"tools\":[5]", "tools.0: expected an object."),
                Arguments.of(MESSAGES + ",\"tools\":[{\"name\":\"f\",\"input_schema\":{},\"description\":5}]",
                        "tools.0.description: expected a string."),
                Arguments.of(MESSAGES + ",\"tools\":[{\"name\":\"f\",\"input_schema\":5}]",
                        "tools.0.input_schema: expected an object."),
                Arguments.of(MESSAGES + ",\"tools\":[{\"name\":\"f\",\"input_schema\":{},\"strict\":\"yes\"}]",
                        "tools.0.strict: expected a boolean."),
                Arguments.of(MESSAGES + ",\"tool_choice\":5", "tool_choice: expected an object."),
                Arguments.of(MESSAGES + ",\"tool_choice\":{\"type\":\"tool\"}", "tool_choice.name: Field required"),
                Arguments.of(MESSAGES + ",\"tools\":[" + TOOL + "],\"tool_choice\":{\"type\":\"tool\"}",
                        "tool_choice.name: Field required"),
                Arguments.of(MESSAGES + ",\"tool_choice\":{\"type\":\"auto\",\"disable_parallel_tool_use\":1}",
                        "tool_choice.disable_parallel_tool_use: expected a boolean."),
                Arguments.of(MESSAGES + ",\"stop_sequences\":\"x\"", "stop_sequences: expected an array."),
                Arguments.of(MESSAGES + ",\"stop_sequences\":[\"a\",5]", "stop_sequences.1: expected a string."),
                Arguments.of(MESSAGES + ",\"stream\":\"yes\"", "stream: expected a boolean."),
                Arguments.of(MESSAGES + ",\"metadata\":5", "metadata: expected an object."),
                Arguments.of(MESSAGES + ",\"metadata\":{\"user_id\":5}", "metadata.user_id: expected a string."),
                Arguments.of(assistant("{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":\"x\"}"),
                        "messages.1.content.0.input: expected an object."),
                Arguments.of(user("{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"ok\",\"is_error\":\"no\"}"),
                        "messages.0.content.0.is_error: expected a boolean."),
                Arguments.of(user("{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":[{\"type\":\"text\",\"text\":1}]}"),
                        "messages.0.content.0.content.0.text: expected a string."),
                Arguments.of(user("{\"type\":\"image\",\"source\":\"x\"}"), "messages.0.content.0.source: expected an object."),
                Arguments.of("\"model\":\"m\",\"max_tokens\":8,\"messages\":[5]", "messages.0: expected an object."),
                Arguments.of(MESSAGES.replace("\"max_tokens\":8", "\"max_tokens\":\"8\""), "max_tokens:"),
                Arguments.of(MESSAGES + ",\"temperature\":\"hot\"", "temperature: expected a number."),
                Arguments.of(MESSAGES + ",\"top_k\":1.5", "top_k: expected an integer."),
                Arguments.of(MESSAGES + ",\"system\":5", "system: expected a string or an array of text blocks."));
    }

    @ParameterizedTest
    @MethodSource("anthropicWrongTypes")
    void anthropicFieldsOfTheWrongTypeAreRefusedWithTheirPath(String fields, String message) {
        assertThatThrownBy(() -> convert(new AnthropicConverter(), "{" + fields + "}"))
                .isInstanceOf(IngressConverter.InvalidRequest.class)
                .hasMessageStartingWith(message);
    }

    static Stream<Arguments> responsesWrongTypes() {
        return Stream.of(
                Arguments.of("\"model\":\"m\",\"input\":[{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\","
                        + "\"arguments\":{\"a\":1}}]", "input.0.arguments: expected a string."),
                Arguments.of(INPUT + ",\"tools\":5", "tools: expected an array."),
                Arguments.of(INPUT + ",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":5}]",
                        "tools.0.parameters: expected an object."),
                Arguments.of(INPUT + ",\"tool_choice\":5", "tool_choice: expected"),
                Arguments.of(INPUT + ",\"tool_choice\":\"sometimes\"", "tool_choice: expected"),
                Arguments.of(INPUT + ",\"tool_choice\":{\"type\":\"function\"}", "tool_choice.name: Field required"),
                Arguments.of(INPUT + ",\"reasoning\":5", "reasoning: expected an object."),
                Arguments.of(INPUT + ",\"reasoning\":{\"effort\":1}", "reasoning.effort: expected a string."),
                Arguments.of(INPUT + ",\"instructions\":5", "instructions: expected a string."),
                Arguments.of(INPUT + ",\"stream\":\"yes\"", "stream: expected a boolean."),
                Arguments.of(INPUT + ",\"background\":\"no\"", "background: expected a boolean."),
                Arguments.of(INPUT + ",\"parallel_tool_calls\":0", "parallel_tool_calls: expected a boolean."),
                Arguments.of(INPUT + ",\"user\":7", "user: expected a string."),
                Arguments.of(INPUT + ",\"text\":\"plain\"", "text: expected an object."),
                Arguments.of(INPUT + ",\"text\":{\"format\":\"json\"}", "text.format: expected an object."),
                Arguments.of(INPUT + ",\"max_output_tokens\":\"9\"", "max_output_tokens: expected a positive integer."),
                Arguments.of("\"model\":\"m\",\"input\":[5]", "input.0: expected an object."),
                Arguments.of("\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":5}]}]",
                        "input.0.content.0.text: expected a string."),
                Arguments.of("\"model\":\"m\",\"input\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
                        + "\"text\":{}}]}]", "input.0.content.0.text: expected a string."),
                Arguments.of("\"model\":\"m\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\","
                        + "\"image_url\":\"http://x/i.png\",\"detail\":3}]}]", "input.0.content.0.detail: expected a string."));
    }

    @ParameterizedTest
    @MethodSource("responsesWrongTypes")
    void responsesFieldsOfTheWrongTypeAreRefusedWithTheirPath(String fields, String message) {
        assertThatThrownBy(() -> convert(new ResponsesConverter(), "{" + fields + "}"))
                .isInstanceOf(IngressConverter.InvalidRequest.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void bytesAfterTheJsonValueAreRefusedOnBothWires() throws Exception {
        for (IngressConverter c : new IngressConverter[] {new AnthropicConverter(), new ResponsesConverter()}) {
            String body = c instanceof AnthropicConverter ? "{" + MESSAGES + "}" : "{" + INPUT + "}";
            for (String tail : new String[] {" {}", body, "x", " 1", "]", "\u0000"}) {
                assertThatThrownBy(() -> convert(c, body + tail))
                        .isInstanceOf(IngressConverter.InvalidRequest.class)
                        .hasMessageStartingWith("The request body");
            }
            // Whitespace after the value is not data.
            assertThat(convert(c, body + " \r\n\t").path("model").asText()).isEqualTo("m");
        }
    }

    @Test
    void aBodyNestedDeeperThanTheBoundIsRefused() throws Exception {
        String deep = "[".repeat(10_000) + "]".repeat(10_000);
        assertThatThrownBy(() -> convert(new AnthropicConverter(), "{" + MESSAGES + ",\"metadata\":{\"x\":" + deep + "}}"))
                .isInstanceOf(IngressConverter.InvalidRequest.class)
                .hasMessageContaining("deeper than 128");
        // A schema nested well below the bound is fine.
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":".repeat(40) + "{}" + "}}".repeat(40);
        JsonNode chat = convert(new ResponsesConverter(), "{" + INPUT + ",\"tools\":[{\"type\":\"function\",\"name\":\"f\","
                + "\"parameters\":" + schema + "}]}");
        assertThat(chat.path("tools").get(0).path("function").path("parameters").path("type").asText()).isEqualTo("object");
    }

    @Test
    void validValuesAndNullsOfTheCheckedFieldsStillConvert() throws Exception {
        JsonNode a = convert(new AnthropicConverter(), "{\"model\":\"m\",\"max_tokens\":8,\"messages\":["
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"tool_result\","
                + "\"tool_use_id\":\"t\",\"content\":[{\"type\":\"text\",\"text\":\"r\"}],\"is_error\":false}]},"
                + "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"f\",\"input\":{\"q\":1}}]}],"
                + "\"tools\":[" + TOOL + "],\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":true},"
                + "\"stop_sequences\":[\"END\"],\"stream\":null,\"metadata\":{\"user_id\":null},\"system\":null,"
                + "\"temperature\":null}");
        assertThat(a.path("tool_choice").asText()).isEqualTo("required");
        assertThat(a.path("parallel_tool_calls").asBoolean(true)).isFalse();
        assertThat(a.path("stop").get(0).asText()).isEqualTo("END");
        assertThat(a.path("stream").asBoolean(true)).isFalse();
        assertThat(a.has("user")).isFalse();
        assertThat(a.path("messages").get(2).path("tool_calls").get(0).path("function").path("arguments").asText())
                .isEqualTo("{\"q\":1}");
        // A tool choice without tools is checked, then left out (the chat wire needs tools for it).
        assertThat(convert(new AnthropicConverter(), "{" + MESSAGES + ",\"tool_choice\":{\"type\":\"auto\"}}").has("tool_choice"))
                .isFalse();

        JsonNode r = convert(new ResponsesConverter(), "{\"model\":\"m\",\"instructions\":null,\"input\":["
                + "{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"},"
                + "{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"ok\"}],"
                + "\"tools\":[" + FUNCTION + "],\"tool_choice\":{\"type\":\"function\",\"name\":\"f\"},"
                + "\"reasoning\":{\"effort\":\"low\",\"summary\":null},\"text\":{\"format\":{\"type\":\"text\"},"
                + "\"verbosity\":\"low\"},\"stream\":false,\"parallel_tool_calls\":null,\"user\":null}");
        assertThat(r.path("messages").get(0).path("tool_calls").get(0).path("function").path("arguments").asText())
                .isEqualTo("{\"a\":1}");
        assertThat(r.path("reasoning_effort").asText()).isEqualTo("low");
        assertThat(r.path("tool_choice").path("function").path("name").asText()).isEqualTo("f");
        assertThat(r.has("parallel_tool_calls")).isFalse();
    }
}
