package dev.continuum.router.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * Expands a trace request's hash IDs into prompt text such that equal IDs give equal token blocks: each ID
 * becomes 512 words, each word a single token (a space and a common English word, checked against the
 * tokenizer), chosen by a SplitMix64 hash of the ID and the word's position. Word boundaries never merge in a
 * byte-level BPE whose pre-tokenizer splits before a space, so a prompt's tokens are exactly its words and two
 * prompts with the same leading IDs share exactly that many leading tokens. The last ID is cut to the request's
 * {@code input_length}.
 */
final class TraceText {
    private static final String[] CANDIDATES = ("the of and to in is it you that he was for on are as with his they "
            + "at be this have from or one had by word but not what all were we when your can said there use an each "
            + "which she do how their if will up other about out many then them these so some her would make like "
            + "him into time has look two more write go see number no way could people my than first water been "
            + "call who oil its now find long down day did get come made may part over new sound take only little "
            + "work know place year live me back give most very after thing our just name good sentence man think "
            + "say great where help through much before line right too mean old any same tell boy follow came want "
            + "show also around form three small set put end does another well large must big even such because "
            + "turn here why ask went men read need land different home us move try kind hand picture again change "
            + "off play spell air away animal house point page letter mother answer found study still learn should "
            + "world high every near add food between own below country plant last school father keep tree never "
            + "start city earth eye light thought head under story saw left few while along might close something "
            + "seem next hard open example begin life always those both paper together got group often run").split(" ");

    private final String[] words;

    private TraceText(String[] words) {
        this.words = words;
    }

    /** Keeps the candidate words that {@code tokenizer} encodes (with their leading space) as one token. */
    static TraceText forTokenizer(SimTokenizer tokenizer) {
        List<String> single = new ArrayList<>();
        for (String w : CANDIDATES) {
            if (tokenizer.encode(" " + w).length == 1) {
                single.add(" " + w);
            }
        }
        if (single.size() < 64) {
            throw new IllegalStateException("the tokenizer encodes only " + single.size() + " of " + CANDIDATES.length
                    + " common words as one token: not an English byte-level BPE");
        }
        return new TraceText(single.toArray(String[]::new));
    }

    /** The prompt of {@code r}, at most {@code maxTokens} words. */
    String prompt(MooncakeTrace.Request r, int maxTokens) {
        int total = Math.min(maxTokens, r.inputLength());
        StringBuilder out = new StringBuilder(total * 6);
        int written = 0;
        for (int b = 0; b < r.hashIds().length && written < total; b++) {
            for (int i = 0; i < MooncakeTrace.TRACE_BLOCK_TOKENS && written < total; i++, written++) {
                long h = mix(r.hashIds()[b] * MooncakeTrace.TRACE_BLOCK_TOKENS + i);
                out.append(words[(int) Long.remainderUnsigned(h, words.length)]);
            }
        }
        return out.toString();
    }

    /** SplitMix64's finaliser: a deterministic, well-spread word choice per (ID, position). */
    private static long mix(long x) {
        long z = x + 0x9E37_79B9_7F4A_7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58_476D_1CE4_E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D0_49BB_1331_11EBL;
        return z ^ (z >>> 31);
    }
}
