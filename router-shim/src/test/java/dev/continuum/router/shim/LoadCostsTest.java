package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The cost functions over the full u64 range of every input (held in a long: a negative long is a u64 above
 * 2^63-1): the edge values 0, 1, 2^31, 2^32, 2^53, 2^63-1, 2^63, 2^64-1 in every field, then a seeded random
 * sweep. Properties: never negative, never NaN with a capacity, monotone in each field under the unsigned
 * order, and any out-of-range field costs at least as much as every in-range one.
 */
class LoadCostsTest {
    private static final long[] EDGES = {0, 1, 1L << 31, 1L << 32, 1L << 53, Long.MAX_VALUE, Long.MIN_VALUE, -1L};
    private static final double[] CAPACITIES = {1, 16, 8_192, 12_000, 1e15, Long.MAX_VALUE};

    private static List<Long> values() {
        List<Long> out = new ArrayList<>();
        for (long e : EDGES) {
            out.add(e);
        }
        SplittableRandom rnd = new SplittableRandom(20261201);
        for (int i = 0; i < 200; i++) {
            int bits = new int[] {8, 16, 32, 53, 63, 64}[rnd.nextInt(6)];
            out.add(bits == 64 ? rnd.nextLong() : rnd.nextLong() >>> (64 - bits));
        }
        return out;
    }

    @Test
    void decodeCostIsMonotoneInEveryFieldOverTheWholeU64Range() {
        List<Long> v = values();
        for (double cap : CAPACITIES) {
            for (int i = 0; i < v.size(); i++) {
                long a = v.get(i);
                long b = v.get((i * 31 + 7) % v.size());
                long c = v.get((i * 17 + 3) % v.size());
                double cost = LoadCosts.decode(a, b, c, cap);
                assertThat(cost).as("%s %s %s / %s", a, b, c, cap).isNotNaN().isNotNegative();
                for (long bigger : v) {
                    if (Long.compareUnsigned(bigger, a) >= 0) {
                        assertThat(LoadCosts.decode(bigger, b, c, cap)).isGreaterThanOrEqualTo(cost);
                    }
                    if (Long.compareUnsigned(bigger, b) >= 0) {
                        assertThat(LoadCosts.decode(a, bigger, c, cap)).isGreaterThanOrEqualTo(cost);
                    }
                    if (Long.compareUnsigned(bigger, c) >= 0) {
                        assertThat(LoadCosts.decode(a, b, bigger, cap)).isGreaterThanOrEqualTo(cost);
                    }
                }
            }
        }
    }

    @Test
    void prefillCostIsMonotoneInEveryFieldOverTheWholeU64Range() {
        List<Long> v = values();
        for (double cap : CAPACITIES) {
            for (int i = 0; i < v.size(); i++) {
                long a = v.get(i);
                long b = v.get((i * 31 + 7) % v.size());
                double cost = LoadCosts.prefill(a, b, cap);
                assertThat(cost).as("%s %s / %s", a, b, cap).isNotNaN().isNotNegative();
                for (long bigger : v) {
                    if (Long.compareUnsigned(bigger, a) >= 0) {
                        assertThat(LoadCosts.prefill(bigger, b, cap)).isGreaterThanOrEqualTo(cost);
                    }
                    if (Long.compareUnsigned(bigger, b) >= 0) {
                        assertThat(LoadCosts.prefill(a, bigger, cap)).isGreaterThanOrEqualTo(cost);
                    }
                }
            }
        }
    }

    @Test
    void anOutOfRangeFieldIsTheLargestCostNeverTheSmallest() {
        for (long huge : new long[] {Long.MAX_VALUE, Long.MIN_VALUE, -1L}) {
            double top = LoadCosts.decode(huge, 0, 0, 12_000);
            for (long v : values()) {
                assertThat(LoadCosts.decode(v, 1, 4, 12_000)).isLessThanOrEqualTo(top);
                assertThat(LoadCosts.prefill(v, 1, 8_192)).isLessThanOrEqualTo(LoadCosts.prefill(huge, 0, 8_192));
            }
            // The overflow the issue describes: blocks near 2^63 plus the request's own blocks must not wrap.
            assertThat(LoadCosts.decode(huge, Long.MAX_VALUE, Long.MAX_VALUE, 12_000))
                    .isEqualTo((double) Long.MAX_VALUE / 12_000);
        }
    }

    @Test
    void ceilDivAndAddSaturateAtTheTop() {
        assertThat(LoadCosts.ceilDiv(Long.MAX_VALUE, 16)).isEqualTo(Long.MAX_VALUE / 16 + 1);
        assertThat(LoadCosts.ceilDiv(64, 16)).isEqualTo(4);
        assertThat(LoadCosts.ceilDiv(65, 16)).isEqualTo(5);
        assertThat(LoadCosts.ceilDiv(0, 16)).isZero();
        assertThat(LoadCosts.add(Long.MAX_VALUE, 1)).isEqualTo(Long.MAX_VALUE);
        assertThat(LoadCosts.add(Long.MAX_VALUE - 2, 1)).isEqualTo(Long.MAX_VALUE - 1);
        assertThat(LoadCosts.magnitude(-1L)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void theBacklogCountsUnansweredDispatchesOnlyWhileTheyAreActive() {
        // A burst no sample shows yet: all of it counts, once.
        assertThat(LoadCosts.backlog(0, 1_000, 1_000)).isEqualTo(1_000);
        // A request that came and went between two samples: nothing is left of it on the rank.
        assertThat(LoadCosts.backlog(0, 1_000, 0)).isZero();
        // Earlier requests the sample shows and still active, plus newer ones it does not show yet.
        assertThat(LoadCosts.backlog(800, 200, 1_000)).isEqualTo(1_000);
        // Other routers' requests in the sample, this router's newest on top.
        assertThat(LoadCosts.backlog(5_000, 200, 200)).isEqualTo(5_200);
        // Never below what this router alone has running there.
        assertThat(LoadCosts.backlog(0, 0, 700)).isEqualTo(700);
        // Out-of-range counters stay the largest backlog.
        assertThat(LoadCosts.backlog(-1L, 0, 0)).isEqualTo(Long.MAX_VALUE);
        assertThat(LoadCosts.backlog(Long.MAX_VALUE, -1L, -1L)).isEqualTo(Long.MAX_VALUE);
    }
}
