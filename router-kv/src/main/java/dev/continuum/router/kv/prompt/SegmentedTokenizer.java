package dev.continuum.router.kv.prompt;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;

/**
 * A tokenizer that tokenizes only what it has not seen: the text is split at the tokenizer's added tokens
 * ({@link AddedTokens}), each segment's IDs come from the shared {@link SegmentCache} when they are there, and the
 * segments that are not are tokenized together in one native call (joined by an added token, whose IDs mark
 * where each one's IDs end). With the premise checked at load ({@link #verify}) the IDs are the whole text's
 * IDs; a tokenizer whose check failed, or a cache of 0 bytes, tokenizes the whole text as before.
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

    private final PromptTokenizer whole;
    private final AddedTokens added;
    private final byte[] identity;
    private final SegmentCache cache;
    private final Stats stats;
    private final boolean segmented;

    /**
     * @param whole     the tokenizer itself; closed with this one
     * @param identity  the tokenizer's identity in the cache's keys (a digest of its tokenizer.json)
     * @param segmented whether the premise held at load ({@link #verify}); false tokenizes every text whole
     */
    SegmentedTokenizer(PromptTokenizer whole, AddedTokens added, byte[] identity, SegmentCache cache, Stats stats,
                       boolean segmented) {
        this.whole = whole;
        this.added = added;
        this.identity = identity.clone();
        this.cache = cache;
        this.stats = stats;
        this.segmented = segmented && added.count() > 0 && added.unsplittable() == null;
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
        // Segments: [starts[i], ends[i]) then the added token bounds[i] (-1 after the last).
        IntList starts = new IntList(64);
        IntList ends = new IntList(64);
        IntList bounds = new IntList(64);
        int pos = 0;
        for (long m = added.next(text, 0); m >= 0; m = added.next(text, pos)) {
            int start = (int) (m >>> 32);
            int token = (int) m;
            starts.add(pos);
            ends.add(start);
            bounds.add(token);
            pos = start + added.content(token).length();
        }
        starts.add(pos);
        ends.add(text.length());
        bounds.add(-1);

        int n = starts.size();
        int[][] ids = new int[n][];
        SegmentCache.Key[] keys = new SegmentCache.Key[n];
        IntList missing = new IntList(8);
        int hits = 0;
        long cachedTokens = 0;
        long missingChars = 0;
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
            }
        }
        stats.segments(hits, missing.size());
        if (missing.size() > 0 && 2 * missingChars >= text.length()) {
            // Mostly new text (a cold prompt): one native call over the text as given, exactly as with the cache
            // off, and the new segments' IDs cut out of its result for the next prompt that repeats them.
            int[] all = whole.encode(text, maxTokens);
            stats.tokens(0, all.length);
            if (carve(all, bounds, ids)) {
                for (int k = 0; k < missing.size(); k++) {
                    int i = missing.get(k);
                    cache.put(keys[i], ids[i]);
                }
            }
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
            cache.put(keys[i], ids[i]);
        }
        return out;
    }

    /**
     * Cuts the IDs of a whole text's encode into its segments' IDs (into {@code ids}, where not already there): each
     * segment's IDs run up to the ID of the added token that ends it. False, and nothing to cache, when the IDs do
     * not line up with the segments (which the premise rules out).
     */
    private boolean carve(int[] all, IntList bounds, int[][] ids) {
        int from = 0;
        int n = bounds.size();
        for (int i = 0; i < n; i++) {
            int bound = bounds.get(i);
            int to = all.length;
            if (bound >= 0) {
                int id = added.id(bound);
                to = from;
                while (to < all.length && all[to] != id) {
                    to++;
                }
                if (to == all.length) {
                    return false;
                }
            }
            if (ids[i] == null) {
                ids[i] = Arrays.copyOfRange(all, from, to);
            } else if (ids[i].length != to - from) {
                return false;
            }
            from = to + 1;
        }
        return from >= all.length;
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
