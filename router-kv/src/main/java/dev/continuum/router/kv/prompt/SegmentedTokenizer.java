package dev.continuum.router.kv.prompt;

import dev.continuum.router.kv.hash.Sightings;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * A tokenizer that tokenizes only what it has not seen: the text is split into pieces, at the tokenizer's added
 * tokens ({@link AddedTokens}) and, inside a long segment, at spaces between words ({@link #cuttable}, every
 * {@link #CHUNK_CHARS} characters or so); each piece's IDs come from the shared {@link SegmentCache} when they are
 * there, and the pieces that are not are tokenized together in one native call (joined by an added token, whose
 * IDs mark where each one's IDs end). A piece is cached when it is seen while the cache has room, and once the
 * cache is full only when it is seen again ({@link Sightings}): then a prompt whose pieces are all new is
 * tokenized whole, exactly as with the cache off. With the premises checked at load
 * ({@link #verify}, {@link #verifyChunks}) the IDs are the whole text's IDs; a tokenizer whose segment check
 * failed, or a cache of 0 bytes, tokenizes the whole text as before, and one whose chunk check failed is cut at its
 * added tokens only.
 */
final class SegmentedTokenizer implements PromptTokenizer {
    /** Counts for the metrics: segments looked up, tokens by where they came from. */
    interface Stats {
        void segments(int hits, int misses);

        void tokens(long fromCache, long encoded);

        Stats NONE = new Stats() {
            @Override
            public void segments(int hits, int misses) {
            }

            @Override
            public void tokens(long fromCache, long encoded) {
            }
        };
    }

    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    });
    private static final ThreadLocal<byte[]> CHUNK = ThreadLocal.withInitial(() -> new byte[8192]);
    /**
     * The least length of a chunk of a long segment, in characters: about 250 tokens of English, so that a long
     * message that repeats an earlier one's beginning (a shared document, an agent's growing scratchpad) reuses all
     * but at most a chunk or so of it, at one key of 128 bits and one lookup per chunk.
     */
    static final int CHUNK_CHARS = 1024;
    /** Texts the chunk premise is checked on: words after words, digits, punctuation, other scripts, odd spacing. */
    private static final String[] CHUNK_PROBES = {
        "The quick brown fox jumps over the lazy dog. It's 10:30 and we've got 3 apples, don't we? Yes sir",
        "Grüße aus München über Straßen naïve café résumé Ünïcödé façade coöperate déjà vu encore",
        "and the of to in is it you that he was for on are as with his they at be this have from or one had by",
        "Привет мир как дела сегодня хорошо спасибо большое Ελληνικά κείμενο εδώ λέξεις και άλλες",
        "mixed CASE Words HERE and tHeRe x y z a b c I a an e.g. U.S.A. foo_bar baz-qux x2 y3 z4 a  b   c",
        "line one\nline two words here\n\nparagraph with words\tand tabs after words and more words",
        "東京 タワー 日本語 の テキスト 와 한국어 텍스트 그리고 中文 文字 和 词 语",
        "emoji 🚀 rocket words 😀 smile words and ï ö ü accents words then 'quoted words' and \"double\" words",
    };

    private final PromptTokenizer whole;
    private final AddedTokens added;
    private final byte[] identity;
    private final SegmentCache cache;
    private final Stats stats;
    private final boolean segmented;
    private final Sightings sightings;
    /** 0: segments are not cut into chunks (the chunk check failed). */
    private final int chunkChars;

    /**
     * @param whole     the tokenizer itself; closed with this one
     * @param identity  the tokenizer's identity in the cache's keys (a digest of its tokenizer.json)
     * @param sightings the pieces seen once (shared like the cache): a piece is cached on its second sighting
     * @param segmented whether the premise held at load ({@link #verify}); false tokenizes every text whole
     * @param chunked   whether the chunk premise held at load ({@link #verifyChunks}); false cuts only at added
     *                  tokens
     */
    SegmentedTokenizer(PromptTokenizer whole, AddedTokens added, byte[] identity, SegmentCache cache,
                       Sightings sightings, Stats stats, boolean segmented, boolean chunked) {
        this.whole = whole;
        this.added = added;
        this.identity = identity.clone();
        this.cache = cache;
        this.sightings = sightings;
        this.stats = stats;
        this.segmented = segmented && added.count() > 0 && added.unsplittable() == null;
        this.chunkChars = chunked ? CHUNK_CHARS : 0;
    }

    /**
     * Whether both sides of every {@link #cuttable} point of the probe texts, tokenized alone, give the whole
     * text's IDs: null when they do, else why not.
     */
    static @org.jspecify.annotations.Nullable String verifyChunks(PromptTokenizer whole) {
        for (String probe : CHUNK_PROBES) {
            if (!Arrays.equals(whole.encode(probe, Integer.MAX_VALUE), chunkedUncached(whole, probe))) {
                return "whole and chunked encodes differ on a probe of " + probe.length() + " characters";
            }
        }
        return null;
    }

    /**
     * Whether whole and segmented encodes agree on every probe (and the added-token table allows splitting):
     * null when they do, else why not.
     */
    static @org.jspecify.annotations.Nullable String verify(PromptTokenizer whole, AddedTokens added) {
        if (added.unsplittable() != null) {
            return added.unsplittable();
        }
        if (added.count() == 0) {
            return "no added tokens to split at";
        }
        for (String probe : added.probes()) {
            int[] a = whole.encode(probe, Integer.MAX_VALUE);
            int[] b = segmentedUncached(whole, added, probe);
            if (!Arrays.equals(a, b)) {
                return "whole and segmented encodes differ on a probe of " + probe.length() + " characters";
            }
        }
        return null;
    }

    /** The text's IDs cut at every {@link #cuttable} point, each side tokenized on its own (the chunk premise). */
    static int[] chunkedUncached(PromptTokenizer whole, String text) {
        IntList out = new IntList(64);
        int from = 0;
        for (int p = 1; p < text.length(); p++) {
            if (cuttable(text, p)) {
                out.addAll(whole.encode(text.substring(from, p), Integer.MAX_VALUE));
                from = p;
            }
        }
        out.addAll(whole.encode(text.substring(from), Integer.MAX_VALUE));
        return out.toArray();
    }

    /** The text's IDs segment by segment, each tokenized on its own (the premise, spelled out). */
    static int[] segmentedUncached(PromptTokenizer whole, AddedTokens added, String text) {
        IntList out = new IntList(64);
        int pos = 0;
        for (long m = added.next(text, 0); m >= 0; m = added.next(text, pos)) {
            int start = (int) (m >>> 32);
            int token = (int) m;
            if (start > pos) {
                out.addAll(whole.encode(text.substring(pos, start), Integer.MAX_VALUE));
            }
            out.add(added.id(token));
            pos = start + added.content(token).length();
        }
        if (pos < text.length()) {
            out.addAll(whole.encode(text.substring(pos), Integer.MAX_VALUE));
        }
        return out.toArray();
    }

    boolean segmented() {
        return segmented;
    }

    @Override
    public int[] encode(String text, int maxTokens) {
        if (!segmented || !cache.enabled()) {
            int[] ids = whole.encode(text, maxTokens);
            stats.tokens(0, ids.length);
            return ids;
        }
        // Pieces: [starts[i], ends[i]) then the added token bounds[i]; -1 after the last piece and after a chunk
        // cut inside a segment.
        IntList starts = new IntList(64);
        IntList ends = new IntList(64);
        IntList bounds = new IntList(64);
        int pos = 0;
        for (long m = added.next(text, 0); m >= 0; m = added.next(text, pos)) {
            int start = (int) (m >>> 32);
            int token = (int) m;
            pieces(text, pos, start, starts, ends, bounds);
            bounds.add(token);
            pos = start + added.content(token).length();
        }
        pieces(text, pos, text.length(), starts, ends, bounds);
        bounds.add(-1);

        int n = starts.size();
        boolean room = cache.hasRoom();
        int[][] ids = new int[n][];
        SegmentCache.Key[] keys = new SegmentCache.Key[n];
        boolean[] admit = new boolean[n];
        IntList missing = new IntList(8);
        int hits = 0;
        int due = 0;
        long missingChars = 0;
        long cachedTokens = 0;
        for (int i = 0; i < n; i++) {
            if (starts.get(i) == ends.get(i)) {
                ids[i] = EMPTY;
                continue;
            }
            keys[i] = key(text, starts.get(i), ends.get(i));
            int[] hit = cache.get(keys[i]);
            if (hit != null) {
                ids[i] = hit;
                hits++;
                cachedTokens += hit.length;
            } else {
                missing.add(i);
                missingChars += ends.get(i) - starts.get(i);
                admit[i] = sightings.sawBefore(keys[i]) || room;
                due += admit[i] ? 1 : 0;
            }
        }
        stats.segments(hits, missing.size());
        if (due == 0 && 2 * missingChars >= text.length()) {
            // Mostly new, nothing to admit and a full cache (a stream of unique prompts, whose only hits are the
            // newlines between turns): one native call over the text as given, exactly as with the cache off. Its
            // pieces are only noted; they are cached if they come again.
            int[] all = whole.encode(text, maxTokens);
            stats.tokens(0, all.length);
            return all;
        }
        long encoded = missing.size() == 0 ? 0 : encodeMissing(text, starts, ends, missing, ids, maxTokens);
        stats.tokens(cachedTokens, encoded);

        long total = 0;
        for (int i = 0; i < n; i++) {
            total += ids[i].length + (bounds.get(i) >= 0 ? 1 : 0);
        }
        if (total > maxTokens) {
            throw new TemplateFailure.TooLarge("prompt of " + total + " tokens (at most " + maxTokens + ")");
        }
        int[] out = new int[(int) total];
        int at = 0;
        for (int i = 0; i < n; i++) {
            System.arraycopy(ids[i], 0, out, at, ids[i].length);
            at += ids[i].length;
            if (bounds.get(i) >= 0) {
                out[at++] = added.id(bounds.get(i));
            }
        }
        for (int k = 0; k < missing.size(); k++) {
            int i = missing.get(k);
            if (admit[i]) {
                cache.put(keys[i], ids[i]);
            }
        }
        return out;
    }

    /**
     * Adds the pieces of the segment {@code [from, to)}: the segment itself or, when chunking is on and the segment
     * is longer than a chunk, chunks of at least {@link #chunkChars} characters (the last may be shorter) cut at the
     * first {@link #cuttable} point past that length, each followed by bound -1 (no added token between them). A
     * cut depends only on the text before it and a character after, so two texts that begin alike are cut alike
     * up to where they differ.
     */
    private void pieces(String text, int from, int to, IntList starts, IntList ends, IntList bounds) {
        int at = from;
        if (chunkChars > 0 && to - from > chunkChars) {
            for (int cut = nextCut(text, at + chunkChars, to - 1); cut > 0;
                 cut = nextCut(text, at + chunkChars, to - 1)) {
                starts.add(at);
                ends.add(cut);
                bounds.add(-1);
                at = cut;
            }
        }
        starts.add(at);
        ends.add(to);
    }

    /** The first cuttable point in {@code [from, limit)}, or -1. */
    private static int nextCut(String text, int from, int limit) {
        for (int p = Math.max(from, 1); p < limit; p++) {
            if (cuttable(text, p)) {
                return p;
            }
        }
        return -1;
    }

    /**
     * Whether a segment may be cut before {@code p}: a space between two letters. A byte-level BPE pre-tokenizer of
     * the GPT-2 family begins a new piece there (the word with its leading space) and no piece runs across it, so
     * both sides tokenized alone give the whole's IDs; {@link #verifyChunks} checks that per tokenizer at load.
     */
    static boolean cuttable(CharSequence text, int p) {
        return p > 0 && p + 1 < text.length() && text.charAt(p) == ' ' && Character.isLetter(text.charAt(p - 1))
                && Character.isLetter(text.charAt(p + 1));
    }

    private static final int[] EMPTY = new int[0];

    /**
     * Tokenizes the missing segments in one native call, joined by the first added token, and cuts the result at
     * that token's ID; if the ID count does not match (it cannot, when the premise holds) each segment is
     * tokenized alone. Returns how many tokens were encoded.
     */
    private long encodeMissing(String text, IntList starts, IntList ends, IntList missing, int[][] ids,
                               int maxTokens) {
        int m = missing.size();
        int limit = (int) Math.min(Integer.MAX_VALUE, (long) maxTokens + m);
        if (m == 1) {
            int i = missing.get(0);
            ids[i] = whole.encode(text.substring(starts.get(i), ends.get(i)), maxTokens);
            return ids[i].length;
        }
        String sep = added.content(0);
        int sepId = added.id(0);
        int length = 0;
        for (int k = 0; k < m; k++) {
            length += ends.get(missing.get(k)) - starts.get(missing.get(k)) + sep.length();
        }
        StringBuilder joined = new StringBuilder(length);
        for (int k = 0; k < m; k++) {
            if (k > 0) {
                joined.append(sep);
            }
            int i = missing.get(k);
            joined.append(text, starts.get(i), ends.get(i));
        }
        int[] all = whole.encode(joined.toString(), limit);
        int seps = 0;
        for (int id : all) {
            if (id == sepId) {
                seps++;
            }
        }
        if (seps == m - 1) {
            int from = 0;
            int k = 0;
            for (int j = 0; j <= all.length; j++) {
                if (j == all.length || all[j] == sepId) {
                    ids[missing.get(k++)] = Arrays.copyOfRange(all, from, j);
                    from = j + 1;
                }
            }
            return all.length - seps;
        }
        long encoded = 0;
        for (int k = 0; k < m; k++) {
            int i = missing.get(k);
            ids[i] = whole.encode(text.substring(starts.get(i), ends.get(i)), maxTokens);
            encoded += ids[i].length;
        }
        return encoded;
    }

    /** SHA-256 of the tokenizer's identity and the segment's UTF-16 code units, its first 128 bits. */
    private SegmentCache.Key key(String text, int from, int to) {
        MessageDigest md = SHA256.get();
        md.reset();
        md.update(identity);
        byte[] chunk = CHUNK.get();
        int fill = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            chunk[fill++] = (byte) c;
            chunk[fill++] = (byte) (c >>> 8);
            if (fill == chunk.length) {
                md.update(chunk, 0, fill);
                fill = 0;
            }
        }
        md.update(chunk, 0, fill);
        byte[] d = md.digest();
        return new SegmentCache.Key(longAt(d, 0), longAt(d, 8));
    }

    /** This thread's SHA-256, reset. */
    static MessageDigest sha256() {
        MessageDigest md = SHA256.get();
        md.reset();
        return md;
    }

    static long longAt(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[at + i] & 0xFF);
        }
        return v;
    }

    /** A digest of a tokenizer.json: the identity its cache keys carry. */
    static byte[] identityOf(byte[] tokenizerJson) {
        MessageDigest md = SHA256.get();
        md.reset();
        return md.digest(tokenizerJson);
    }

    @Override
    public void close() {
        whole.close();
    }

    /** A growable int array (no boxing). */
    static final class IntList {
        private int[] a;
        private int n;

        IntList(int capacity) {
            a = new int[capacity];
        }

        void add(int v) {
            if (n == a.length) {
                a = Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        void addAll(int[] vs) {
            if (n + vs.length > a.length) {
                a = Arrays.copyOf(a, Math.max(n * 2, n + vs.length));
            }
            System.arraycopy(vs, 0, a, n, vs.length);
            n += vs.length;
        }

        int get(int i) {
            return a[i];
        }

        int size() {
            return n;
        }

        int[] toArray() {
            return Arrays.copyOf(a, n);
        }
    }
}
