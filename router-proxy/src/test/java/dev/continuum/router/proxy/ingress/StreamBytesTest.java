package dev.continuum.router.proxy.ingress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.proxy.ingress.anthropic.AnthropicConverter;
import dev.continuum.router.proxy.ingress.responses.ResponsesConverter;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The exact bytes both stream converters send for a corpus of upstream streams (plain text as the simulator sends
 * it, escapes and non-ASCII, tool calls after text, a matched stop sequence, an upstream error mid-stream, a stream
 * without {@code [DONE]}, an empty one), compared with the recorded output in {@code ingress-streams/}. The
 * recorded files were written by the converters before their hot path was rewritten for cost, so a byte that moves
 * fails here even where the JSON would still parse the same. {@code -Dingress.streams.record=<dir>} writes the
 * current output to {@code dir} instead of comparing (to record a deliberate change of the wire).
 */
class StreamBytesTest {
    private static final String HEAD = "{\"id\":\"cmpl-sim\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,"
            + "\"model\":\"demo-model\",";
    private static final Map<String, String[]> CORPUS = Map.of(
            "text", new String[] {
                HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"tok \"},\"finish_reason\":null}]}",
                HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tok \"},\"finish_reason\":null}]}",
                HEAD + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}",
                HEAD + "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":4}}}",
                "[DONE]"},
            "escapes", new String[] {
                HEAD + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"quote \\\" and \\\\ \"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"line\\nbreak\\t\\u0001 caf\u00e9 \ud83d\ude00\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"
                        + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":9,"
                        + "\"completion_tokens_details\":{\"reasoning_tokens\":2}}}",
                "[DONE]"},
            "tools", new String[] {
                "{\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me look.\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"function\":"
                        + "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\"\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
                        + "\":\\\"Paris\\\"}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"g\","
                        + "\"arguments\":\"{}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}",
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}",
                "[DONE]"},
            "stop-sequence", new String[] {
                "{\"id\":\"c2\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\",\"stop_reason\":\"END\"}]}"},
            "error", new String[] {
                "{\"id\":\"c3\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}",
                "{\"error\":{\"message\":\"engine \\\"died\\\"\",\"type\":\"server_error\",\"code\":\"boom\"}}",
                "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"after\"}}]}",
                "[DONE]"},
            "empty", new String[] {"[DONE]"});

    static java.util.stream.Stream<Arguments> cases() {
        return CORPUS.keySet().stream().sorted()
                .flatMap(c -> java.util.stream.Stream.of(Arguments.of("messages", c), Arguments.of("responses", c)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void theConvertedStreamIsByteForByteTheRecordedOne(String wire, String name) throws Exception {
        IngressConverter conv = wire.equals("messages") ? new AnthropicConverter() : new ResponsesConverter();
        String actual = convert(conv.newStream(), CORPUS.get(name));
        String file = wire + "-" + name + ".sse";
        String record = System.getProperty("ingress.streams.record");
        if (record != null) {
            Files.writeString(Path.of(record, file), actual, StandardCharsets.UTF_8);
            return;
        }
        assertThat(actual).isEqualTo(recorded(file));
    }

    /** The client's bytes for {@code data} events then the upstream's end, each event from a direct buffer. */
    private static String convert(IngressConverter.StreamConverter s, String[] data) throws Exception {
        ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
        ByteBuf out = alloc.buffer();
        try {
            for (String d : data) {
                byte[] bytes = d.getBytes(StandardCharsets.UTF_8);
                ByteBuf in = alloc.directBuffer(bytes.length).writeBytes(bytes);
                try {
                    s.event(in, out);
                } finally {
                    in.release();
                }
            }
            s.end(out);
            return out.toString(StandardCharsets.UTF_8);
        } finally {
            out.release();
        }
    }

    private static String recorded(String file) throws IOException {
        try (InputStream in = StreamBytesTest.class.getResourceAsStream("/ingress-streams/" + file)) {
            return new String(Objects.requireNonNull(in, file).readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
