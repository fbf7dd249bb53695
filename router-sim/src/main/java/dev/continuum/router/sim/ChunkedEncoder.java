package dev.continuum.router.sim;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * The simulator's tokenization cache for replays at high speed-ups: a prompt is cut at spaces between two letters
 * every 1,024 characters or so, and each chunk's IDs are kept by its text, so that prompts that share their
 * beginning (the replayed traces are built of shared blocks) tokenize only their new end. A real worker tokenizes
 * on its own machine; the simulator shares two cores with the router under test, and whole-prompt tokenization
 * at ten times the trace's rate would take them both.
 *
 * <p>A cut is safe for byte-level BPE tokenizers of the GPT-2 family: their pre-tokenizer starts a new piece at a
 * space before a word, and no piece runs across it. {@link #check} compares whole and chunked encodes of probe
 * texts when the tokenizer loads; a tokenizer that fails runs without the cache. Bounded: past
 * {@link #MAX_ENTRIES} chunks the map is cleared (a replay's working set refills it).
 */
final class ChunkedEncoder {
    static final int CHUNK_CHARS = 1024;
    private static final int MAX_ENTRIES = 150_000;
    private static final String PROBE = "The quick brown fox jumps over the lazy dog. It's 10:30, we've 3 apples; "
            + "Grüße aus München über Straßen, naïve café. Привет мир как дела. 東京 タワー and 中文 文字 words 🚀 "
            + "rocket\nnew line words\ttab words  two  spaces words <|im_end|>\n<|im_start|>user\nthe end of it";

    private final Function<String, int[]> whole;
    private final ConcurrentHashMap<String, int[]> chunks = new ConcurrentHashMap<>();

    private ChunkedEncoder(Function<String, int[]> whole) {
        this.whole = whole;
    }

    /** A chunked encoder over {@code whole}, or null when the tokenizer fails the chunk check. */
    static @Nullable ChunkedEncoder check(Function<String, int[]> whole) {
        int[] expected = whole.apply(PROBE);
        int[] cut = new int[0];
        int from = 0;
        for (int p = 1; p <= PROBE.length(); p++) {
            if (p == PROBE.length() || cuttable(PROBE, p)) {
                int[] part = whole.apply(PROBE.substring(from, p));
                cut = concat(cut, part);
                from = p;
            }
        }
        return Arrays.equals(expected, cut) ? new ChunkedEncoder(whole) : null;
    }

    int[] encode(String text) {
        if (text.length() < 2 * CHUNK_CHARS) {
            return whole.apply(text);
        }
        if (chunks.size() > MAX_ENTRIES) {
            chunks.clear();
        }
        int[] out = new int[text.length() / 3 + 16];
        int n = 0;
        int from = 0;
        while (from < text.length()) {
            int to = nextCut(text, from + CHUNK_CHARS);
            String chunk = text.substring(from, to);
            int[] ids = chunks.get(chunk);
            if (ids == null) {
                ids = whole.apply(chunk);
                chunks.put(chunk, ids);
            }
            if (n + ids.length > out.length) {
                out = Arrays.copyOf(out, Math.max(2 * out.length, n + ids.length));
            }
            System.arraycopy(ids, 0, out, n, ids.length);
            n += ids.length;
            from = to;
        }
        return Arrays.copyOf(out, n);
    }

    /** The first cut at or after {@code from}, or the text's end. */
    private static int nextCut(String text, int from) {
        for (int p = from; p < text.length() - 1; p++) {
            if (cuttable(text, p)) {
                return p;
            }
        }
        return text.length();
    }

    private static boolean cuttable(String text, int p) {
        return p > 0 && p + 1 < text.length() && text.charAt(p) == ' ' && Character.isLetter(text.charAt(p - 1))
                && Character.isLetter(text.charAt(p + 1));
    }

    private static int[] concat(int[] a, int[] b) {
        int[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
