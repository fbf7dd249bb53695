package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PromptTokensTest {
    @Test
    void promptTokensUseTheLargerOfFourCharactersPerTokenAndOnePerWord() {
        assertThat(estimate("")).isZero();
        assertThat(estimate("abcdefgh")).isEqualTo(2);
        assertThat(estimate("abcdefghi")).isEqualTo(3);
        assertThat(estimate("a b c d e")).isEqualTo(5);
        assertThat(estimate("  lead and trail  ")).isEqualTo(5); // 18 chars
        assertThat(estimate("日本語の テキスト")).isEqualTo(3); // 9 chars, 2 words
    }

    @Test
    void countsOnlyTheGivenRangeOfTheBuffer() {
        char[] padded = "xx a b c yy".toCharArray();
        assertThat(PromptTokens.estimate(padded, 3, 5)).isEqualTo(3); // "a b c"
    }

    private static long estimate(String text) {
        return PromptTokens.estimate(text.toCharArray(), 0, text.length());
    }
}
