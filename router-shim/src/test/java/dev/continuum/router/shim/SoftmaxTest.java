package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SoftmaxTest {
    private static final boolean[] ALL = {true, true, true, true};

    @Test
    void upstreamsCaseZeroThreeNineAtTemperatureOne() {
        // Upstream's test_softmax_sample_with_sample_returns_selected_logit: logits 0, 3, 9, T = 1; the range is
        // 9, so the weights are exp(0), exp(-1/3), exp(-1).
        double[] costs = {0, 3, 9};
        double w0 = 1;
        double w1 = Math.exp(-1.0 / 3);
        double w2 = Math.exp(-1);
        double sum = w0 + w1 + w2;
        // A sample in the middle of each probability interval selects that entry.
        assertThat(Softmax.sample(costs, ALL, 3, 1.0, (w0 / 2) / sum)).isZero();
        assertThat(Softmax.sample(costs, ALL, 3, 1.0, (w0 + w1 / 2) / sum)).isEqualTo(1);
        assertThat(Softmax.sample(costs, ALL, 3, 1.0, (w0 + w1 + w2 / 2) / sum)).isEqualTo(2);
    }

    @Test
    void theEmpiricalDistributionMatchesTheSoftmaxProbabilities() {
        double[] costs = {2, 4, 10, 7};
        double t = 0.5;
        double[] expected = new double[4];
        double sum = 0;
        for (int i = 0; i < 4; i++) {
            expected[i] = Math.exp(-(costs[i] - 2) / ((10 - 2) * t));
            sum += expected[i];
        }
        int[] seen = new int[4];
        SplittableRandom random = new SplittableRandom(42);
        int n = 200_000;
        for (int i = 0; i < n; i++) {
            seen[Softmax.sample(costs, ALL, 4, t, random.nextDouble())]++;
        }
        for (int i = 0; i < 4; i++) {
            // 200,000 draws: the standard error of each share is below 0.0012; 0.006 is five of them.
            assertThat((double) seen[i] / n).as("share of %s", i).isCloseTo(expected[i] / sum, within(0.006));
        }
    }

    @Test
    void equalCostsAreUniformAndIneligibleEntriesAreNeverChosen() {
        double[] costs = {5, 5, 1, 5};
        boolean[] eligible = {true, true, false, true};
        int[] seen = new int[4];
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 30_000; i++) {
            seen[Softmax.sample(costs, eligible, 4, 1.0, random.nextDouble())]++;
        }
        assertThat(seen[2]).isZero();
        for (int i : new int[] {0, 1, 3}) {
            assertThat(seen[i] / 30_000.0).isCloseTo(1 / 3.0, within(0.02));
        }
        assertThat(Softmax.sample(costs, new boolean[4], 4, 1.0, 0.5)).isEqualTo(-1);
    }

    @Test
    void aLowTemperatureAlmostAlwaysPicksTheCheapest() {
        double[] costs = {3, 1, 2};
        SplittableRandom random = new SplittableRandom(1);
        int cheapest = 0;
        for (int i = 0; i < 1000; i++) {
            cheapest += Softmax.sample(costs, ALL, 3, 0.01, random.nextDouble()) == 1 ? 1 : 0;
        }
        assertThat(cheapest).isEqualTo(1000); // exp(-50) per competitor
    }
}
