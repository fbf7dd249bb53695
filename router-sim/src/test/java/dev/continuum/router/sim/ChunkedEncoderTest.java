package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The replay-only chunk cache gives the whole text's IDs on Qwen3's tokenizer, and tokenizes a repeat's new end only. */
class ChunkedEncoderTest {
    @Test
    void chunkedEncodesEqualWholeOnesAndARepeatedBeginningIsNotTokenizedAgain() {
        try (SimTokenizer tokenizer = SimTokenizer.load(SimTokenizerTest.models().resolve("tokenizer.json"))) {
            AtomicInteger charsEncoded = new AtomicInteger();
            ChunkedEncoder chunked = ChunkedEncoder.check(text -> {
                charsEncoded.addAndGet(text.length());
                return tokenizer.encode(text);
            });
            assertThat(chunked).as("Qwen3 passes the chunk check").isNotNull();
            StringBuilder doc = new StringBuilder("<|im_start|>user\n");
            String[] words = {"radix", "tree", "Straße", "cache", "東京", "block", "naïve", "prefix", "42", "ok."};
            for (int i = 0; doc.length() < 30_000; i++) {
                doc.append(i % 11 == 0 ? "\n" : " ").append(words[(i * 7 + i / 5) % words.length]);
            }
            for (String end : new String[] {" first question<|im_end|>\n", " second question here<|im_end|>\n"}) {
                String prompt = doc + end + "<|im_start|>assistant\n";
                charsEncoded.set(0);
                assertThat(chunked.encode(prompt)).containsExactly(tokenizer.encode(prompt));
                if (end.startsWith(" second")) {
                    assertThat(charsEncoded.get()).as("only the last chunk or two").isLessThan(3 * 1024 + 100);
                }
            }
        }
    }
}
