package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestBodyInspectorTest {

    private static ParsedRequest inspect(String json) throws Exception {
        ByteBuf buf = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        try {
            ParsedRequest p = RequestBodyInspector.inspect(buf, true);
            assertThat(buf.readerIndex()).isZero();
            return p;
        } finally {
            buf.release();
        }
    }

    private static ParsedRequest withKey(String json) throws Exception {
        ByteBuf buf = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
        try {
            return RequestBodyInspector.inspect(buf, true, true);
        } finally {
            buf.release();
        }
    }

    @Test
    void hashesTheFirstUserMessageWhateverTheFieldOrderAndTheRestOfTheConversation() throws Exception {
        ParsedRequest a = withKey("{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"sys\"},"
                + "{\"role\":\"user\",\"content\":\"hello there\"}]}");
        ParsedRequest b = withKey("{\"messages\":[{\"content\":\"other sys\",\"role\":\"system\"},"
                + "{\"content\":\"hello there\",\"role\":\"user\"},{\"role\":\"assistant\",\"content\":\"hi\"},"
                + "{\"role\":\"user\",\"content\":\"next\"}],\"model\":\"m\"}");
        ParsedRequest parts = withKey("{\"model\":\"m\",\"messages\":[{\"role\":\"user\","
                + "\"content\":[{\"type\":\"text\",\"text\":\"hello there\"}]}]}");
        ParsedRequest other = withKey("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"bye\"}]}");

        assertThat(a.firstUserMessageKey()).isNotZero().isEqualTo(b.firstUserMessageKey())
                .isEqualTo(parts.firstUserMessageKey());
        assertThat(other.firstUserMessageKey()).isNotEqualTo(a.firstUserMessageKey());
        assertThat(a.estimatedPromptTokens()).isEqualTo(inspect("{\"model\":\"m\",\"messages\":[{\"role\":\"system\","
                + "\"content\":\"sys\"},{\"role\":\"user\",\"content\":\"hello there\"}]}").estimatedPromptTokens());
        assertThat(inspect("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}")
                .firstUserMessageKey()).as("only computed when asked for").isZero();
        assertThat(withKey("{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"x\"}]}")
                .firstUserMessageKey()).as("no user message").isZero();
    }

    @Test
    void readsModelAndStreamAndSkipsEverythingElse() throws Exception {
        ParsedRequest p = inspect("{\"messages\":[{\"model\":\"inner\"}],\"model\":\"m\",\"stream\":true,\"nvext\":{\"x\":1}}");
        assertThat(p.model()).isEqualTo("m");
        assertThat(p.stream()).isTrue();
        assertThat(inspect("{\"model\":\"m\"}")).isEqualTo(new ParsedRequest("m", false));
        assertThat(inspect("{\"model\":\"m\",\"stream\":null}")).isEqualTo(new ParsedRequest("m", false));
    }

    @Test
    void estimatesPromptTokensFromMessageAndPromptTextOnlyInTheSamePass() throws Exception {
        // "abcdefgh": 8 characters, 1 word -> 2; "a b c": 5 characters, 3 words -> 3. Roles and part types,
        // and fields outside messages/prompt, do not count.
        assertThat(inspect("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"abcdefgh\"},"
                + "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a b c\"}]}],"
                + "\"temperature\":0.5,\"user\":\"a long user name here\"}").estimatedPromptTokens()).isEqualTo(2 + 3);
        assertThat(inspect("{\"model\":\"m\",\"prompt\":\"abcdefghi\"}").estimatedPromptTokens()).isEqualTo(3);
        assertThat(inspect("{\"model\":\"m\",\"prompt\":[\"abcd\",\"a b\"]}").estimatedPromptTokens()).isEqualTo(1 + 2);
        assertThat(inspect("{\"model\":\"m\",\"messages\":[]}").estimatedPromptTokens()).isZero();
        // A request no dispatch hook will see skips the walk.
        ByteBuf buf = Unpooled.copiedBuffer("{\"model\":\"m\",\"prompt\":\"abcdefghi\"}", StandardCharsets.UTF_8);
        try {
            assertThat(RequestBodyInspector.inspect(buf, false).estimatedPromptTokens()).isZero();
        } finally {
            buf.release();
        }
    }

    @Test
    void notesNvextRoutingFieldsOnlyAtTheTopLevel() throws Exception {
        assertThat(inspect("{\"model\":\"m\",\"nvext\":{\"annotations\":[\"x\"],\"backend_instance_id\":7}}").untrustedNvext())
                .isTrue();
        assertThat(inspect("{\"model\":\"m\",\"nvext\":{\"token_data\":[1,2]}}").untrustedNvext()).isTrue();
        assertThat(inspect("{\"model\":\"m\",\"nvext\":{\"annotations\":[]}}").untrustedNvext()).isFalse();
        assertThat(inspect("{\"model\":\"m\",\"meta\":{\"nvext\":{\"dp_rank\":1}}}").untrustedNvext()).isFalse();
    }

    @Test
    void readsFromACompositeBufferWithoutMovingIt() throws Exception {
        CompositeByteBuf c = Unpooled.compositeBuffer();
        c.addComponent(true, Unpooled.directBuffer().writeBytes("{\"mod".getBytes(StandardCharsets.UTF_8)));
        c.addComponent(true, Unpooled.directBuffer().writeBytes("el\":\"m\",\"stream\":false}".getBytes(StandardCharsets.UTF_8)));
        try {
            assertThat(RequestBodyInspector.inspect(c, true)).isEqualTo(new ParsedRequest("m", false));
            assertThat(c.readerIndex()).isZero();
        } finally {
            c.release();
        }
    }

    @Test
    void refusesMalformedOrIncompleteBodies() {
        for (String bad : new String[] {"", "[]", "{\"model\":\"m\"", "{\"model\":\"m\"} x", "{\"model\":", "nope"}) {
            assertThatThrownBy(() -> inspect(bad)).isInstanceOf(RequestBodyInspector.InvalidBody.class)
                    .satisfies(e -> assertThat(((RequestBodyInspector.InvalidBody) e).json).isTrue());
        }
    }

    @Test
    void refusesDataAfterTheObjectAndBodiesNestedDeeperThanTheBound() {
        // The parser reads without recursion, so a deep body costs no stack; its nesting bound refuses it.
        String deep = "{\"model\":\"m\",\"x\":" + "[".repeat(10_000) + "]".repeat(10_000) + "}";
        for (String bad : List.of("{\"model\":\"m\"}{\"model\":\"n\"}", "{\"model\":\"m\"} {}", "{\"model\":\"m\"}]", deep)) {
            assertThatThrownBy(() -> inspect(bad)).isInstanceOf(RequestBodyInspector.InvalidBody.class)
                    .satisfies(e -> assertThat(((RequestBodyInspector.InvalidBody) e).json).isTrue());
        }
    }

    @Test
    void refusesAMissingOrMistypedModel() {
        for (String bad : new String[] {"{}", "{\"model\":\"\"}", "{\"model\":null}", "{\"model\":3}",
            "{\"model\":\"m\",\"stream\":\"yes\"}"}) {
            assertThatThrownBy(() -> inspect(bad)).isInstanceOf(RequestBodyInspector.InvalidBody.class)
                    .satisfies(e -> assertThat(((RequestBodyInspector.InvalidBody) e).json).isFalse());
        }
    }
}
