package dev.continuum.router.core.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PromptTokensTest {
    @Test
    void promptTokensUseTheLargerOfFourCharactersPerTokenAndOnePerWord() {
        assertThat(PromptTokens.estimate("")).isZero();
        assertThat(PromptTokens.estimate("abcdefgh")).isEqualTo(2);
        assertThat(PromptTokens.estimate("abcdefghi")).isEqualTo(3);
        assertThat(PromptTokens.estimate("a b c d e")).isEqualTo(5);
    }

    @Test
    void promptTokensOverACharRangeAgreeWithTheStringForm() {
        for (String text : List.of("", "abcdefgh", "abcdefghi", "a b c d e", "  lead and trail  ", "日本語の テキスト")) {
            char[] padded = ("xx " + text + " yy").toCharArray();
            assertThat(PromptTokens.estimate(padded, 3, text.length())).as(text).isEqualTo(PromptTokens.estimate(text));
        }
    }
}
