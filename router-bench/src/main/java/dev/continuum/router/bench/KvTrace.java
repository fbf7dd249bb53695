package dev.continuum.router.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Requests as chains of KV blocks, for the index benchmarks: either read from a Mooncake-format trace (one
 * JSON object per line with {@code "hash_ids": [...]}, each ID one 512-token block; the path comes from the
 * command line, the trace is not part of the project), or generated with the same shape: prefix families
 * shared by many requests (system prompts, multi-turn history) followed by blocks unique to the request.
 *
 * <p>Each block ID becomes a {@code tokens_hash} (a 64-bit mix of the ID, standing in for the XXH3 of its
 * tokens) and each request prefix an engine {@code block_hash} (a chained hash of the prefix, as an engine's
 * sequence hash is), all computed here, before measuring.
 */
final class KvTrace {
    private static final Pattern HASH_IDS = Pattern.compile("\"hash_ids\"\\s*:\\s*\\[([^\\]]*)\\]");

    final long[][] tokens;
    final long[][] engine;

    private KvTrace(List<long[]> ids) {
        tokens = new long[ids.size()][];
        engine = new long[ids.size()][];
        for (int r = 0; r < ids.size(); r++) {
            long[] chain = ids.get(r);
            tokens[r] = new long[chain.length];
            engine[r] = new long[chain.length];
            long seq = 0x5EED;
            for (int i = 0; i < chain.length; i++) {
                tokens[r][i] = mix(chain[i] + 1);
                seq = mix(seq ^ tokens[r][i]);
                engine[r][i] = seq;
            }
        }
    }

    int requests() {
        return tokens.length;
    }

    /** The trace at {@code path}, or a synthetic one of {@code requests} requests for "synthetic". */
    static KvTrace load(String path, int requests, long seed) {
        if (path.equals("synthetic")) {
            return synthetic(requests, seed);
        }
        try {
            List<long[]> ids = new ArrayList<>();
            for (String line : Files.readAllLines(Path.of(path))) {
                Matcher m = HASH_IDS.matcher(line);
                if (m.find() && !m.group(1).isBlank()) {
                    String[] parts = m.group(1).split(",");
                    long[] chain = new long[parts.length];
                    for (int i = 0; i < parts.length; i++) {
                        chain[i] = Long.parseLong(parts[i].trim());
                    }
                    ids.add(chain);
                }
            }
            return new KvTrace(ids);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Mooncake-like: 512 prefix families of 2..64 blocks, picked with a skew towards popular ones (the
     * square of a uniform draw), each request taking all or part of its family's prefix and adding 1..24
     * blocks of its own. The block ID space is shared, so equal IDs are equal blocks.
     */
    static KvTrace synthetic(int requests, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        int families = 512;
        long[][] prefixes = new long[families][];
        long nextId = 0;
        for (int f = 0; f < families; f++) {
            prefixes[f] = new long[random.nextInt(2, 65)];
            for (int i = 0; i < prefixes[f].length; i++) {
                prefixes[f][i] = nextId++;
            }
        }
        List<long[]> ids = new ArrayList<>();
        for (int r = 0; r < requests; r++) {
            double u = random.nextDouble();
            long[] prefix = prefixes[(int) (u * u * families)];
            int shared = random.nextInt(4) == 0 ? random.nextInt(1, prefix.length + 1) : prefix.length;
            int own = random.nextInt(1, 25);
            long[] chain = new long[shared + own];
            System.arraycopy(prefix, 0, chain, 0, shared);
            for (int i = 0; i < own; i++) {
                chain[shared + i] = nextId++;
            }
            ids.add(chain);
        }
        return new KvTrace(ids);
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
