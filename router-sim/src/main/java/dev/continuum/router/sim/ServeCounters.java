package dev.continuum.router.sim;

import java.util.Arrays;

/**
 * What a simulated engine has served, for the replay harness: requests, prompt and cached tokens and each request's
 * simulated time to first token (the first {@value #MAX_RECORDED}, in serving order). Not thread-safe: its owner
 * serialises every call.
 */
final class ServeCounters {
    private static final int MAX_RECORDED = 1 << 20;

    /** Totals since start. */
    record Stats(long requests, long promptTokens, long cachedTokens, long[] ttftNanos) {
    }

    private long requests;
    private long promptTokens;
    private long cachedTokens;
    private long[] ttfts = new long[1024];
    private int recorded;

    void served(int prompt, int cached, long ttftNanos) {
        requests++;
        promptTokens += prompt;
        cachedTokens += cached;
        if (recorded < MAX_RECORDED) {
            if (recorded == ttfts.length) {
                ttfts = Arrays.copyOf(ttfts, Math.min(MAX_RECORDED, 2 * ttfts.length));
            }
            ttfts[recorded++] = ttftNanos;
        }
    }

    long requests() {
        return requests;
    }

    long promptTokens() {
        return promptTokens;
    }

    long cachedTokens() {
        return cachedTokens;
    }

    Stats stats() {
        return new Stats(requests, promptTokens, cachedTokens, Arrays.copyOf(ttfts, recorded));
    }
}
