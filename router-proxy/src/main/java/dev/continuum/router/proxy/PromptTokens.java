package dev.continuum.router.proxy;

/**
 * The coarse prompt-size heuristic used without a tokenizer (by the load-only picker; the KV issue brings real
 * tokenization), computed per string value of {@code messages} or {@code prompt} while the proxy's one parse
 * of the body runs ({@link RequestBodyInspector}): the larger of one token per four characters (rounded up) and one token per
 * whitespace-separated word. Four characters per token is the usual English BPE average; the word count
 * keeps short-word and non-Latin text from being underestimated below one token per word.
 */
public final class PromptTokens {
    private PromptTokens() {
    }

    /** The estimate for {@code length} chars of {@code text} from {@code offset} (a parser's own buffer: nothing is copied). */
    public static long estimate(char[] text, int offset, int length) {
        long words = 0;
        boolean inWord = false;
        for (int i = offset; i < offset + length; i++) {
            boolean space = Character.isWhitespace(text[i]);
            if (!space && !inWord) {
                words++;
            }
            inWord = !space;
        }
        return Math.max((length + 3L) / 4, words);
    }
}
