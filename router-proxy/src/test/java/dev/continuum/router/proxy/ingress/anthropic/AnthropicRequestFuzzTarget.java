package dev.continuum.router.proxy.ingress.anthropic;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * Coverage-guided fuzzing of the Anthropic Messages request parser (docs/testing.md, "Fuzzing"): the fuzzer's
 * bytes are a request body, seeded with SDK-shaped requests. The contract: every body is either converted or
 * refused with {@link IngressConverter.InvalidRequest} (the route's 400) whose message names a field path or the
 * body; nothing else is thrown (another exception would be the route's 500). A converted body is a chat request
 * with a model, a message list, a positive {@code max_tokens} and a boolean {@code stream}; count_tokens accepts
 * every body a Messages request accepts.
 */
class AnthropicRequestFuzzTarget {
    private final AnthropicConverter converter = new AnthropicConverter();

    @FuzzTest(maxDuration = "10s")
    void everyBodyIsConvertedOrRefusedWithAFieldPath(byte[] input) throws Exception {
        ByteBuf body = Unpooled.wrappedBuffer(input);
        ByteBuf out = null;
        try {
            out = converter.toChatRequest(body, ByteBufAllocator.DEFAULT);
        } catch (IngressConverter.InvalidRequest e) {
            assertRefusal(e);
        }
        assertThat(body.readerIndex()).isZero();
        boolean counted;
        try {
            ObjectNode chat = AnthropicRequests.toChat(IngressJson.readRequest(body), true);
            assertThat(chat.path("messages").isArray()).isTrue();
            counted = true;
        } catch (IngressConverter.InvalidRequest e) {
            assertRefusal(e);
            counted = false;
        }
        if (out == null) {
            return;
        }
        try {
            JsonNode chat = IngressJson.readResponse(out);
            assertThat(chat.path("model").isTextual()).isTrue();
            assertThat(chat.path("messages").isArray()).isTrue();
            assertThat(chat.path("stream").isBoolean()).isTrue();
            assertThat(chat.path("max_tokens").asLong()).isPositive();
            assertThat(counted).as("a body a Messages request accepts is counted too").isTrue();
        } finally {
            out.release();
        }
    }

    private static void assertRefusal(IngressConverter.InvalidRequest e) {
        assertThat(e.getMessage()).matches("(?s)(The request body|[a-z_]+(\\.[a-z_0-9]+)*[:.]).*");
    }
}
