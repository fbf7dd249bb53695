package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A tokenizer's added tokens as Hugging Face tokenizers splits on them before normalizing: the tokens of
 * {@code tokenizer.json}'s {@code added_tokens} that are matched on the raw text ({@code normalized: false}),
 * found leftmost-longest (the crate's {@code AddedVocabulary} uses an Aho-Corasick automaton in
 * {@code LeftmostLongest} mode). Between two matches the text is tokenized on its own, so a rendered prompt's
 * IDs are the concatenation of its segments' IDs and the added tokens' IDs: the premise of the segment cache.
 *
 * <p>A token that strips the whitespace next to it ({@code lstrip}, {@code rstrip}) or matches only whole words
 * ({@code single_word}) moves the segment boundaries; such a tokenizer is not split at all ({@link #unsplittable}
 * says why). Normalized added tokens are matched inside each segment, as in the whole text, so they do not matter
 * here.
 */
final class AddedTokens {
    /** At most this many added tokens are considered; a larger table makes the tokenizer run uncached. */
    static final int MAX_TOKENS = 65_536;

    private final String[] contents;
    private final int[] ids;
    /** By first character: indexes into contents, longest first. */
    private final Map<Character, int[]> byFirst;
    /** Bit per UTF-16 unit: whether some token starts with it (the scan's fast test, no boxing). */
    private final long[] firstChars = new long[1024];
    private final @Nullable String unsplittable;
    private final int maxLength;

    private AddedTokens(String[] contents, int[] ids, @Nullable String unsplittable) {
        this.contents = contents;
        this.ids = ids;
        this.unsplittable = unsplittable;
        Map<Character, List<Integer>> groups = new HashMap<>();
        for (int i = 0; i < contents.length; i++) {
            char first = contents[i].charAt(0);
            groups.computeIfAbsent(first, c -> new ArrayList<>()).add(i);
            firstChars[first >>> 6] |= 1L << first;
        }
        Map<Character, int[]> index = new HashMap<>();
        groups.forEach((c, list) -> index.put(c, list.stream()
                .sorted(Comparator.comparingInt((Integer i) -> contents[i].length()).reversed())
                .mapToInt(Integer::intValue).toArray()));
        this.byFirst = Map.copyOf(index);
        this.maxLength = Arrays.stream(contents).mapToInt(String::length).max().orElse(0);
    }

    /** Reads {@code added_tokens} of a {@code tokenizer.json} (already bounded in size by the loader). */
    static AddedTokens read(ObjectMapper mapper, byte[] tokenizerJson) throws IOException {
        JsonNode added = addedTokensNode(mapper, tokenizerJson);
        if (added == null || added.isNull()) {
            return new AddedTokens(new String[0], new int[0], null);
        }
        if (!added.isArray()) {
            return new AddedTokens(new String[0], new int[0], "added_tokens is not a list");
        }
        if (added.size() > MAX_TOKENS) {
            return new AddedTokens(new String[0], new int[0], added.size() + " added tokens (at most "
                    + MAX_TOKENS + " are split on)");
        }
        List<String> contents = new ArrayList<>();
        List<Integer> ids = new ArrayList<>();
        String why = null;
        for (JsonNode t : added) {
            JsonNode content = t.get("content");
            JsonNode id = t.get("id");
            if (content == null || !content.isTextual() || content.asText().isEmpty() || id == null
                    || !id.canConvertToInt()) {
                why = "an added token without a content string or an int id";
                break;
            }
            if (t.path("normalized").asBoolean(false)) {
                continue; // matched after normalization, inside each segment as in the whole text
            }
            if (t.path("lstrip").asBoolean(false) || t.path("rstrip").asBoolean(false)
                    || t.path("single_word").asBoolean(false)) {
                why = "added token " + content.asText() + " has lstrip, rstrip or single_word";
                break;
            }
            contents.add(content.asText());
            ids.add(id.asInt());
        }
        if (why != null) {
            return new AddedTokens(new String[0], new int[0], why);
        }
        return new AddedTokens(contents.toArray(String[]::new), ids.stream().mapToInt(Integer::intValue).toArray(),
                null);
    }

    /**
     * The top-level {@code added_tokens} value, streamed: the vocabulary and merges (most of the file) are skipped,
     * never built as a tree.
     */
    private static @Nullable JsonNode addedTokensNode(ObjectMapper mapper, byte[] tokenizerJson) throws IOException {
        try (JsonParser p = mapper.createParser(tokenizerJson)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                if ("added_tokens".equals(name)) {
                    return mapper.readTree(p);
                }
                p.skipChildren();
            }
            return null;
        }
    }

    /** Why the tokenizer's segments are not independent, or null when they are (as far as the table tells). */
    @Nullable String unsplittable() {
        return unsplittable;
    }

    int count() {
        return contents.length;
    }

    String content(int token) {
        return contents[token];
    }

    int id(int token) {
        return ids[token];
    }

    /**
     * The leftmost added token at or after {@code from} (the longest one starting there) as
     * {@code (start << 32) | token}, or -1 when none is left.
     */
    long next(String text, int from) {
        if (contents.length == 0) {
            return -1;
        }
        for (int i = from; i < text.length(); i++) {
            char c0 = text.charAt(i);
            if ((firstChars[c0 >>> 6] & (1L << c0)) == 0) {
                continue;
            }
            int[] candidates = byFirst.get(c0);
            if (candidates == null) {
                continue;
            }
            for (int token : candidates) {
                String c = contents[token];
                if (text.startsWith(c, i)) {
                    return ((long) i << 32) | token;
                }
            }
        }
        return -1;
    }

    /** The longest added token's length in UTF-16 units (0 without any). */
    int maxLength() {
        return maxLength;
    }

    /**
     * Whether {@code left + right} splits into the segments of {@code left} followed by those of {@code right}:
     * {@code right} starts with an added token, and no added token could match across the join (one starting in
     * {@code left}'s last characters and ending in {@code right}). When it holds, and the premise of the segment
     * cache holds, the IDs of the joined text are {@code left}'s IDs followed by {@code right}'s.
     */
    boolean joinsCleanly(String left, String right) {
        if (contents.length == 0 || right.isEmpty() || (next(right, 0) >>> 32) != 0) {
            return false;
        }
        int from = Math.max(0, left.length() - (maxLength - 1));
        String window = left.substring(from) + right.substring(0, Math.min(right.length(), maxLength));
        int join = left.length() - from;
        for (int p = 0; p < join; p++) {
            int[] candidates = byFirst.get(window.charAt(p));
            if (candidates == null) {
                continue;
            }
            for (int token : candidates) {
                if (p + contents[token].length() > join && window.startsWith(contents[token], p)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The probe texts the premise is checked with at load: every token among text, whitespace and non-ASCII. */
    List<String> probes() {
        List<String> probes = new ArrayList<>();
        String[] around = {"", "a", " ", "\n", "\n\n", "  x ", "héllo wörld", "東京", "🚀 ok", "x.y", "'s"};
        int n = Math.min(contents.length, 64);
        for (int i = 0; i < n; i++) {
            String t = contents[i];
            for (String left : around) {
                probes.add(left + t + left);
                probes.add("user\n" + left + t + "\nassistant " + left);
            }
            probes.add(t + t + "text " + contents[(i + 1) % contents.length] + "  ");
        }
        probes.add(String.join(" and ", Arrays.asList(contents).subList(0, n)));
        return probes;
    }
}
