package dev.continuum.router.load;

import dev.continuum.router.discovery.ModelCard;
import org.jspecify.annotations.Nullable;

/**
 * The data-parallel ranks a worker's card declares: {@code [start, start + size)}. Load samples and their
 * gauges are admitted only for these ranks, so a publisher cannot grow the store or {@code /metrics} with
 * ranks its worker does not have.
 *
 * @param start the first declared rank (>= 0)
 * @param size  how many ranks follow it (> 0)
 */
public record DpRanks(int start, int size) {
    /** What a worker without a card, or with a card that declares no data parallelism, has: rank 0 only. */
    public static final DpRanks RANK_ZERO = new DpRanks(0, 1);

    public DpRanks {
        if (start < 0) {
            throw new IllegalArgumentException("start: " + start + " (expected: >= 0)");
        }
        if (size <= 0) {
            throw new IllegalArgumentException("size: " + size + " (expected: > 0)");
        }
    }

    /**
     * The ranks {@code card} declares. Without {@code data_parallel_size} only rank 0 is declared, whatever
     * the start rank says; with it, a missing start rank reads as 0. The parser already refused non-positive
     * sizes and negative starts (they read as unknown).
     */
    public static DpRanks of(@Nullable ModelCard card) {
        if (card == null || card.dataParallelSize() == null) {
            return RANK_ZERO;
        }
        Integer start = card.dataParallelStartRank();
        return new DpRanks(start == null ? 0 : start, card.dataParallelSize());
    }

    /** Whether {@code rank} (an unsigned 32-bit wire value held in a long) is declared. */
    public boolean admits(long rank) {
        // Both ints are non-negative, so the long sum cannot overflow.
        return rank >= start && rank < (long) start + size;
    }
}
