package dev.continuum.router.core.proxy;

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

    public static long estimate(CharSequence text) {
        long chars = text.length();
        long words = 0;
        boolean inWord = false;
        for (int i = 0; i < text.length(); i++) {
            boolean space = Character.isWhitespace(text.charAt(i));
            if (!space && !inWord) {
                words++;
            }
            inWord = !space;
        }
        return Math.max((chars + 3) / 4, words);
    }

    /** {@link #estimate(CharSequence)} over {@code length} chars of {@code text} from {@code offset}, copying nothing. */
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
