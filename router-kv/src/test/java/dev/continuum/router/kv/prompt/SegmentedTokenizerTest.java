package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.atomic.AtomicLong;
import dev.continuum.router.kv.hash.Sightings;
import org.junit.jupiter.api.Test;

/**
 * The segment cache's premise and bookkeeping on real tokenizers (DJL): Qwen3's, and small tokenizer.json files
 * built here whose added tokens break the premise. The whole-corpus comparison against the JavaScript tokenizer
 * is in {@link ReferenceCorpusTest}.
 */
class SegmentedTokenizerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Counts what the tokenizer reports. */
    private static final class Counts implements SegmentedTokenizer.Stats {
        final AtomicLong hits = new AtomicLong();
        final AtomicLong misses = new AtomicLong();
        final AtomicLong fromCache = new AtomicLong();
        final AtomicLong encoded = new AtomicLong();

        @Override
        public void segments(int h, int m) {
            hits.addAndGet(h);
            misses.addAndGet(m);
        }

        @Override
        public void tokens(long c, long e) {
            fromCache.addAndGet(c);
            encoded.addAndGet(e);
        }
    }

    @Test
    void aGrowingConversationTokenizesOnlyItsNewSegments() throws Exception {
        byte[] json = Files.readAllBytes(Qwen3Fixture.tokenizerJson());
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            assertThat(SegmentedTokenizer.verify(djl, added)).isNull();
            Counts counts = new Counts();
            SegmentedTokenizer t = new SegmentedTokenizer(djl, added, SegmentedTokenizer.identityOf(json),
                    new SegmentCache(1 << 20, SegmentCache.Listener.NONE), new Sightings(1 << 10), counts, true, true);
            String turn1 = "<|im_start|>system\nYou are terse. 東京 🚀<|im_end|>\n<|im_start|>user\nHello there,"
                    + " how are you?<|im_end|>\n<|im_start|>assistant\n";
            String turn2 = turn1 + "<think>\n\n</think>\n\nFine.<|im_end|>\n<|im_start|>user\nAnd now?<|im_end|>\n"
                    + "<|im_start|>assistant\n";
            assertThat(t.encode(turn1, 1_000)).containsExactly(djl.encode(turn1, 1_000));
            assertThat(counts.hits.get()).isZero();
            assertThat(t.encode(turn1, 1_000)).as("seen twice: now cached").containsExactly(djl.encode(turn1, 1_000));
            long encodedFirst = counts.encoded.get();
            assertThat(t.encode(turn2, 1_000)).containsExactly(djl.encode(turn2, 1_000));
            assertThat(counts.hits.get()).as("turn 1's five segments (and repeats) come from the cache")
                    .isGreaterThanOrEqualTo(5);
            assertThat(counts.encoded.get() - encodedFirst).as("only turn 2's new text is encoded")
                    .isLessThan(djl.encode(turn2, 1_000).length - djl.encode(turn1, 1_000).length);
        }
    }

    @Test
    void theNewSegmentsOfAPromptCostOneNativeCall() throws Exception {
        byte[] json = Files.readAllBytes(Qwen3Fixture.tokenizerJson());
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            AtomicLong calls = new AtomicLong();
            SegmentedTokenizer t = new SegmentedTokenizer(counting(djl, calls), added, SegmentedTokenizer.identityOf(json),
                    new SegmentCache(1 << 20, SegmentCache.Listener.NONE), new Sightings(1 << 10), SegmentedTokenizer.Stats.NONE, true, true);
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < 20; i++) {
                text.append("<|im_start|>user\nQuestion ").append(i).append(" über 東京?<|im_end|>\n");
            }
            String prompt = text.toString();
            assertThat(t.encode(prompt, 10_000)).containsExactly(djl.encode(prompt, 10_000));
            assertThat(calls.get()).as("20 new segments, one call").isEqualTo(1);
        }
    }

    @Test
    void aTokenThatStripsWhitespaceMakesTheTokenizerRunWhole() throws Exception {
        byte[] json = wordLevel("{\"id\":5,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":true,"
                + "\"rstrip\":false,\"normalized\":false,\"special\":true}", "{\"type\":\"Whitespace\"}");
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            assertThat(SegmentedTokenizer.verify(djl, added)).contains("lstrip");
        }
    }

    @Test
    void aPreTokenizerThatMarksOnlyTheFirstPieceFailsTheProbes() throws Exception {
        // Metaspace with prepend_scheme "first": the whole text gets the word-start mark only at its start, a
        // segment tokenized alone gets it again, so segments are not independent.
        byte[] json = wordLevel("{\"id\":5,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":false,"
                        + "\"rstrip\":false,\"normalized\":false,\"special\":true}",
                "{\"type\":\"Metaspace\",\"replacement\":\"\u2581\",\"prepend_scheme\":\"first\",\"split\":true}");
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            assertThat(added.unsplittable()).isNull();
            assertThat(SegmentedTokenizer.verify(djl, added)).contains("differ");
            Counts counts = new Counts();
            SegmentedTokenizer t = new SegmentedTokenizer(djl, added, SegmentedTokenizer.identityOf(json),
                    new SegmentCache(1 << 20, SegmentCache.Listener.NONE), new Sightings(1 << 10), counts, false, false);
            assertThat(t.encode("a<s>a", 100)).containsExactly(djl.encode("a<s>a", 100));
            assertThat(counts.hits.get() + counts.misses.get()).as("no lookups: it runs whole").isZero();
        }
    }

    @Test
    void onceTheCacheIsFullAStreamOfUniquePromptsIsOnlyNotedAndCostsOneCallEach() throws Exception {
        byte[] json = Files.readAllBytes(Qwen3Fixture.tokenizerJson());
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            AtomicLong calls = new AtomicLong();
            SegmentCache cache = new SegmentCache(1 << 20, SegmentCache.Listener.NONE);
            SegmentedTokenizer t = new SegmentedTokenizer(counting(djl, calls), added,
                    SegmentedTokenizer.identityOf(json), cache, new Sightings(1 << 12), SegmentedTokenizer.Stats.NONE,
                    true, true);
            String first = "<|im_start|>user\nA question seen while the cache has room<|im_end|>\n";
            assertThat(t.encode(first, 10_000)).containsExactly(djl.encode(first, 10_000));
            assertThat(cache.size()).as("with room, a piece is cached the first time").isPositive();
            for (long k = 0; cache.hasRoom(); k++) {
                cache.put(new SegmentCache.Key(k, ~k), new int[1024]); // other prompts' pieces fill it
            }
            int held = cache.size();
            long bytes = cache.bytes();
            calls.set(0);
            for (int i = 0; i < 50; i++) {
                String unique = "<|im_start|>user\nUnique question number " + i + " about " + "words ".repeat(i)
                        + "<|im_end|>\n<|im_start|>assistant " + i + "\n";
                assertThat(t.encode(unique, 10_000)).containsExactly(djl.encode(unique, 10_000));
            }
            assertThat(calls.get()).as("one native call a prompt").isEqualTo(50);
            assertThat(cache.size()).as("nothing seen once is cached in a full cache").isEqualTo(held);
            assertThat(cache.bytes()).isEqualTo(bytes);
            String twice = "<|im_start|>user\nA question sent twice<|im_end|>\n";
            t.encode(twice, 10_000);
            t.encode(twice, 10_000);
            assertThat(cache.size()).as("a piece seen again is admitted").isGreaterThan(held);
            assertThat(t.encode(twice, 10_000)).containsExactly(djl.encode(twice, 10_000));
        }
    }

    @Test
    void aLongMessageThatRepeatsAnEarlierOnesBeginningReusesItsChunks() throws Exception {
        byte[] json = Files.readAllBytes(Qwen3Fixture.tokenizerJson());
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            AddedTokens added = AddedTokens.read(JSON, json);
            assertThat(SegmentedTokenizer.verifyChunks(djl)).as("the chunk premise on Qwen3's tokenizer").isNull();
            Counts counts = new Counts();
            SegmentedTokenizer t = new SegmentedTokenizer(djl, added, SegmentedTokenizer.identityOf(json),
                    new SegmentCache(8 << 20, SegmentCache.Listener.NONE), new Sightings(1 << 12), counts, true,
                    true);
            StringBuilder doc = new StringBuilder();
            String[] words = {"radix", "tree", "über", "cache", "token", "Straße", "block", "worker", "naïve", "prefix"};
            for (int i = 0; doc.length() < 40_000; i++) {
                doc.append(i % 97 == 0 ? ". " : " ").append(words[(i * 7 + i / 13) % words.length]);
            }
            long[] encodedBy = new long[3];
            for (int turn = 0; turn < 3; turn++) {
                String prompt = "<|im_start|>user\n" + doc + " and question " + turn
                        + " asks something else entirely<|im_end|>\n<|im_start|>assistant\n";
                long before = counts.encoded.get();
                assertThat(t.encode(prompt, 100_000)).as("turn " + turn).containsExactly(djl.encode(prompt, 100_000));
                encodedBy[turn] = counts.encoded.get() - before;
            }
            assertThat(encodedBy[2]).as("the third sighting encodes only the message's new end, not its %d tokens",
                    encodedBy[0]).isLessThan(encodedBy[0] / 10);
            assertThat(counts.fromCache.get()).isGreaterThan(encodedBy[0] * 8 / 10);
        }
    }

    @Test
    void aPreTokenizerThatKeepsTrailingSpacesFailsTheChunkProbes() throws Exception {
        // Words split with their trailing space: a cut before a space leaves it a piece of its own.
        byte[] trailing = wordLevel(plain(5, "<a>"), "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[a-z]+ ?\"},"
                + "\"behavior\":\"Isolated\",\"invert\":false}");
        try (DjlTokenizer djl = DjlTokenizer.load(trailing)) {
            assertThat(SegmentedTokenizer.verifyChunks(djl)).contains("differ");
        }
        byte[] whitespace = wordLevel(plain(5, "<a>"), "{\"type\":\"Whitespace\"}");
        try (DjlTokenizer djl = DjlTokenizer.load(whitespace)) {
            assertThat(SegmentedTokenizer.verifyChunks(djl)).isNull();
        }
    }

    @Test
    void aSpaceBetweenTwoLettersIsTheOnlyCut() {
        assertThat(SegmentedTokenizer.cuttable("ab cd", 2)).isTrue();
        assertThat(SegmentedTokenizer.cuttable("東 京", 1)).isTrue();
        for (String text : new String[] {"a. b", "a  b", "a 1", "1 a", "a\nb", "a\tb", "a 🚀", " a", "a "}) {
            for (int p = 0; p <= text.length(); p++) {
                assertThat(SegmentedTokenizer.cuttable(text, p)).as("%s at %d", text, p).isFalse();
            }
        }
    }

    private static PromptTokenizer counting(DjlTokenizer djl, AtomicLong calls) {
        return new PromptTokenizer() {
            @Override
            public int[] encode(String text, int maxTokens) {
                calls.incrementAndGet();
                return djl.encode(text, maxTokens);
            }

            @Override
            public void close() {
            }
        };
    }

    @Test
    void addedTokensAreFoundLeftmostLongest() throws Exception {
        byte[] json = wordLevel(plain(5, "<a>") + "," + plain(6, "<a>b") + "," + plain(7, "b<c"),
                "{\"type\":\"Whitespace\"}");
        AddedTokens added = AddedTokens.read(JSON, json);
        long m = added.next("xb<a>by", 0);
        assertThat(m >>> 32).as("b<c does not match; <a>b at 2 is the longest there").isEqualTo(2);
        assertThat(added.content((int) m)).isEqualTo("<a>b");
        assertThat(added.next("plain text", 0)).isEqualTo(-1);
        try (DjlTokenizer djl = DjlTokenizer.load(json)) {
            for (String text : new String[] {"x<a>by", "<a><a>b<a>", "hello<a>x b<c", "x"}) {
                assertThat(SegmentedTokenizer.segmentedUncached(djl, added, text)).as(text)
                        .containsExactly(djl.encode(text, 100));
            }
        }
    }

    /** An added token matched on the raw text, with no stripping. */
    private static String plain(int id, String content) {
        return "{\"id\":" + id + ",\"content\":\"" + content + "\",\"single_word\":false,\"lstrip\":false,"
                + "\"rstrip\":false,\"normalized\":false,\"special\":false}";
    }

    private static byte[] wordLevel(String addedTokens, String preTokenizer) {
        return ("{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":[" + addedTokens + "],"
                + "\"normalizer\":null,\"pre_tokenizer\":" + preTokenizer + ",\"post_processor\":null,"
                + "\"decoder\":null,\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"[UNK]\":0,\"a\":1,\"\u2581a\":2,"
                + "\"x\":3,\"hello\":4,\"<a>\":5,\"<a>b\":6,\"b<c\":7,\"y\":8,\"b\":9},\"unk_token\":\"[UNK]\"}}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
