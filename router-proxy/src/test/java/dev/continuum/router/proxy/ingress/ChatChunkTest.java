package dev.continuum.router.proxy.ingress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The streaming read of one chat chunk: what the stream converters use, and what it skips. */
class ChatChunkTest {
    private static ChatChunk read(String json) throws IngressConverter.InvalidResponse {
        return ChatChunk.read(Unpooled.copiedBuffer(json, StandardCharsets.UTF_8));
    }

    @Test
    void readsTheFirstChoiceToolFragmentsAndUsageAndSkipsTheRest() throws Exception {
        ChatChunk c = read("{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":{\"odd\":[1]},\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"logprobs\":{\"content\":[{\"t\":1}]},\"delta\":{\"role\":\"assistant\","
                + "\"content\":\"Hi\",\"tool_calls\":[{\"index\":1,\"id\":\"t\",\"type\":\"function\",\"function\":"
                + "{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]},\"finish_reason\":\"stop\",\"stop_reason\":\"END\"},"
                + "{\"index\":1,\"delta\":{\"content\":\"other choice\"}}],"
                + "\"usage\":{\"prompt_tokens\":99999999999999999999999,\"completion_tokens\":2,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":4}},\"nvext\":{\"x\":[{}]}}");
        assertThat(c.id()).isEqualTo("c1");
        assertThat(c.model()).isEqualTo("m");
        assertThat(c.created()).isZero();
        assertThat(c.content()).isEqualTo("Hi");
        assertThat(c.toolCalls()).containsExactly(new ChatChunk.ToolCallDelta(1, "t", "f", "{\"a\""));
        assertThat(c.finishReason()).isEqualTo("stop");
        assertThat(c.matchedStop()).isEqualTo("END");
        assertThat(c.usage()).isEqualTo(new ChatChunk.Usage(Long.MAX_VALUE, 2, 4, 0));
        assertThat(c.error()).isFalse();
    }

    @Test
    void anErrorChunkAndBadJsonAreTold() throws Exception {
        assertThat(read("{\"error\":{\"message\":\"x\"}}").error()).isTrue();
        assertThat(read("{\"choices\":[{\"delta\":{},\"stop_reason\":151643}]}").matchedStop()).isNull();
        assertThatThrownBy(() -> read("[1]")).isInstanceOf(IngressConverter.InvalidResponse.class);
        assertThatThrownBy(() -> read("{\"choices\":[")).isInstanceOf(IngressConverter.InvalidResponse.class);
    }
}
