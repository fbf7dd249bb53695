package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The KV formulas against costs computed by hand (each case spells its arithmetic out). */
class KvCostsTest {
    private static final KvPickerSettings DEFAULTS = KvPickerSettings.DEFAULTS;

    @Test
    void fullFormulaCountsThePromptOnceAndCreditsTheCachedBlocks() {
        // raw prefill = (100 + 64) / 16 = 10.25 blocks; credit 1 * 2 = 2; adjusted 8.25
        // decode = 10 + max(0, ceil(64/16) - 2) = 12; cost = 1 * 8.25 + 12 = 20.25
        assertThat(KvCosts.full(100, 10, 64, 16, 2, DEFAULTS)).isEqualTo(20.25);
        // credit 0.5, scale 2: adjusted = 10.25 - 1 = 9.25; cost = 18.5 + 12 = 30.5
        KvPickerSettings s = new KvPickerSettings(0.5, 2.0, 0, false, null);
        assertThat(KvCosts.full(100, 10, 64, 16, 2, s)).isEqualTo(30.5);
        // an idle rank holding nothing: (0 + 100) / 16 = 6.25, decode 0 + ceil(100/16) = 7: 13.25
        assertThat(KvCosts.full(0, 0, 100, 16, 0, DEFAULTS)).isEqualTo(13.25);
    }

    @Test
    void creditBeyondThePrefillTermIsClampedAtZeroAndTheDecodeTermNeverGoesNegative() {
        // raw 10.25 - 20 < 0 -> 0; decode 10 + max(0, 4 - 20) = 10
        assertThat(KvCosts.full(100, 10, 64, 16, 20, DEFAULTS)).isEqualTo(10.0);
    }

    @Test
    void aCounterNearTwoToTheSixtyFourIsTheLargestCostNeverAWrap() {
        double huge = KvCosts.full(Long.MAX_VALUE, Long.MAX_VALUE, 64, 16, 0, DEFAULTS);
        assertThat(huge).isGreaterThan(1e17);
        assertThat(KvCosts.full(-1, -1, 64, 16, 0, DEFAULTS)).isEqualTo(huge); // a u64 above Long.MAX_VALUE
    }

    @Test
    void conditionalDecodeScoreTakesTheCreditFromTheDecodeBlocks() {
        // decode = 10 + (4 - 2) = 12; minus 1 * 2 = 10
        assertThat(KvCosts.conditionalDecode(10, 64, 16, 2, DEFAULTS)).isEqualTo(10.0);
        // fully offset: max(0, 0 + 0 - 4) = 0
        assertThat(KvCosts.conditionalDecode(0, 64, 16, 4, DEFAULTS)).isZero();
    }

    @Test
    void withoutLoadRanksCompeteOnRequestSizeMinusCredit() {
        assertThat(KvCosts.withoutLoad(100, 16, 3, DEFAULTS)).isCloseTo(6.25 - 3, within(1e-12));
    }

    @Test
    void bypassPolicyMatchesUpstreamsOwnCases() {
        // Upstream's IslBoundingPolicy tests (lib/kv-router conditional_disagg): 1000 tokens, 14 blocks of 64
        // cached -> 104 uncached, share 0.104: bypass.
        assertThat(KvCosts.mostlyCached(1000, 64, 14)).isTrue();
        // 200 tokens, nothing cached: share 1.0 >= 0.7
        assertThat(KvCosts.mostlyCached(200, 64, 0)).isFalse();
        // 100,000 tokens, 1,000 blocks of 64 cached: 36,000 uncached >= 2,048
        assertThat(KvCosts.mostlyCached(100_000, 64, 1000)).isFalse();
        // exactly 2,048 uncached is not below the bound
        assertThat(KvCosts.mostlyCached(2048, 64, 0)).isFalse();
        // an empty prompt: 0 uncached, share 0
        assertThat(KvCosts.mostlyCached(0, 64, 0)).isTrue();
        // overlap beyond the prompt: uncached saturates at 0
        assertThat(KvCosts.mostlyCached(500, 64, 10)).isTrue();
    }
}
