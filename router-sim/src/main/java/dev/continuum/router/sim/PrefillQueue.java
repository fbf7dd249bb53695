package dev.continuum.router.sim;

import java.time.Duration;

/**
 * One engine rank's prefill queue, the simulator's prefill model: prompts are prefilled one at a time, in arrival
 * order, each costing a fixed part plus a part per uncached prompt token, so a prompt's time to first token is
 *
 * <pre>
 *   start = max(arrival, the previous prefill's end)
 *   TTFT  = start + prefillBase + prefillPerToken × uncached tokens − arrival
 * </pre>
 *
 * <p>Requests accepted but not yet admitted (the simulator is still tokenizing them) are {@link #announce}d with an
 * estimate of their tokens and count in {@link #pendingTokens} meanwhile, as an engine counts a request in its queue
 * from the moment it receives it. Shared by the Dynamo workers ({@link WorkerKv}) and the plain vLLM server
 * ({@link SimVllmServer}), so both answer with the same TTFT for the same cache state and queue.
 *
 * <p>Not thread-safe: its owner serialises every call. Times are {@link System#nanoTime} values, compared and never
 * assumed positive.
 */
final class PrefillQueue {
    private final long baseNanos;
    private final long perTokenNanos;
    /** When the queue empties; {@code Long.MIN_VALUE} before the first prefill (compare, never subtract). */
    private long end = Long.MIN_VALUE;
    /** Estimated prompt tokens of requests announced but not yet admitted. */
    private long announced;

    PrefillQueue(Duration prefillBase, Duration prefillPerToken) {
        this.baseNanos = prefillBase.toNanos();
        this.perTokenNanos = prefillPerToken.toNanos();
    }

    /** Queues the prefill of {@code uncachedTokens} for a request that arrived at {@code arrival}: its TTFT. */
    long admit(long arrival, long uncachedTokens) {
        long start = end == Long.MIN_VALUE || end - arrival < 0 ? arrival : end;
        end = start + baseNanos + saturatedMultiply(perTokenNanos, Math.max(0, uncachedTokens));
        return end - arrival;
    }

    /** As {@link #admit}, for a request {@link #announce}d with {@code announcedTokens}. */
    long admit(long arrival, long uncachedTokens, long announcedTokens) {
        withdraw(announcedTokens);
        return admit(arrival, uncachedTokens);
    }

    /** A request arrived with about {@code tokens} prompt tokens and will be admitted once tokenized. */
    void announce(long tokens) {
        announced += Math.max(0, tokens);
    }

    /** An announced request that will not be admitted, or that is being admitted. */
    void withdraw(long tokens) {
        announced = Math.max(0, announced - Math.max(0, tokens));
    }

    /** When the queue empties; {@code Long.MIN_VALUE} before the first prefill. */
    long end() {
        return end;
    }

    /**
     * The prompt tokens still to prefill at {@code now}: the queue's remaining time over the cost per token (a
     * fixed cost counts as the tokens it would take), plus the announced estimates.
     */
    long pendingTokens(long now) {
        long queued = end == Long.MIN_VALUE || end - now <= 0 || perTokenNanos <= 0 ? 0
                : (end - now + perTokenNanos - 1) / perTokenNanos;
        return queued + announced;
    }

    long perTokenNanos() {
        return perTokenNanos;
    }

    private static long saturatedMultiply(long a, long b) {
        long hi = Math.multiplyHigh(a, b);
        long lo = a * b;
        return hi == 0 && lo >= 0 ? lo : Long.MAX_VALUE;
    }
}
