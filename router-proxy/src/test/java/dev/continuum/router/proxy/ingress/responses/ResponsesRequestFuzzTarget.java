package dev.continuum.router.proxy.ingress.responses;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * Coverage-guided fuzzing of the OpenAI Responses request parser (docs/testing.md, "Fuzzing"): the fuzzer's bytes
 * are a request body, seeded with SDK-shaped requests. The contract: every body is either converted or refused
 * with {@link IngressConverter.InvalidRequest} (the route's 400) whose message names a field path or the body;
 * nothing else is thrown (another exception would be the route's 500). A converted body is a chat request with a
 * model, a message list and a boolean {@code stream}, and its tool choice is only sent with tools.
 */
class ResponsesRequestFuzzTarget {
    private final ResponsesConverter converter = new ResponsesConverter();

    @FuzzTest(maxDuration = "10s")
    void everyBodyIsConvertedOrRefusedWithAFieldPath(byte[] input) throws Exception {
        ByteBuf out;
        try {
            out = converter.toChatRequest(Unpooled.wrappedBuffer(input), ByteBufAllocator.DEFAULT);
        } catch (IngressConverter.InvalidRequest e) {
            assertThat(e.getMessage()).matches("(?s)(The request body|[a-z_]+(\\.[a-z_0-9]+)*[:.]).*");
            return;
        }
        try {
            JsonNode chat = IngressJson.readResponse(out);
            assertThat(chat.path("model").isTextual()).isTrue();
            assertThat(chat.path("messages").isArray()).isTrue();
            assertThat(chat.path("stream").isBoolean()).isTrue();
            if (chat.has("tool_choice")) {
                assertThat(chat.path("tools").size()).isPositive();
            }
        } finally {
            out.release();
        }
    }
}
