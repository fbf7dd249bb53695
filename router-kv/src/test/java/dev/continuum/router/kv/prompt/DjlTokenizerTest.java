package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The IDs-only tokenization path against DJL's own {@code encode} on Qwen3's real tokenizer: the same IDs for text
 * that exercises leading spaces, special-token text, non-ASCII, emoji and a long prompt (agreement with an
 * independent tokenizer is {@link ReferenceCorpusTest}'s job), and the token cap.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DjlTokenizerTest {
    private DjlTokenizer tokenizer;

    @BeforeAll
    void load() throws Exception {
        DjlTokenizer.configureNative(Files.createTempDirectory("djl-test"));
        tokenizer = DjlTokenizer.load(Files.readAllBytes(Qwen3Fixture.tokenizerJson()));
    }

    @AfterAll
    void close() {
        tokenizer.close();
    }

    @Test
    void idsOnlyEqualsDjlsEncode() {
        String longText = "Le débit p99 a doublé après l'ajout de workers 🚀; 東京の天気は晴れ.\n".repeat(400);
        for (String text : List.of("", " leading space", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
                "tabs\tand\r\nnewlines  ", "emoji 👩‍👩‍👧 and combining é", longText)) {
            long[] djl = tokenizer.djlEncode(text);
            int[] ours = tokenizer.encode(text, Integer.MAX_VALUE);
            assertThat(Arrays.stream(ours).asLongStream().toArray()).as(text.length() > 40 ? "long text" : text)
                    .containsExactly(djl);
        }
        assertThat(tokenizer.encode(longText(), Integer.MAX_VALUE).length).isGreaterThan(8_000);
    }

    @Test
    void moreTokensThanTheCapIsTooLarge() {
        assertThatThrownBy(() -> tokenizer.encode(longText(), 100)).isInstanceOf(TemplateFailure.TooLarge.class);
    }

    private static String longText() {
        return "word ".repeat(9_000);
    }
}
