package dev.continuum.router.shim;

/**
 * Softmax sampling over costs (lower is better), as upstream's {@code softmax_sample} does it: costs are
 * negated and rescaled by their range, so {@code p_i ∝ exp(-(c_i - min) / ((max - min) * T))}; equal costs
 * give a uniform choice. Allocation-free: it reads the caller's arrays.
 */
final class Softmax {
    private Softmax() {
    }

    /**
     * Samples an index among those with {@code eligible[i]} in {@code [0, n)}.
     *
     * @param u a uniform sample in {@code [0, 1)}
     * @return the chosen index, or -1 when none is eligible
     */
    static int sample(double[] costs, boolean[] eligible, int n, double temperature, double u) {
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        int count = 0;
        int last = -1;
        for (int i = 0; i < n; i++) {
            if (eligible[i]) {
                min = Math.min(min, costs[i]);
                max = Math.max(max, costs[i]);
                count++;
                last = i;
            }
        }
        if (count == 0) {
            return -1;
        }
        boolean uniform = !(max > min) || Double.isInfinite(max - min);
        double scale = uniform ? 0 : 1.0 / ((max - min) * temperature);
        double sum = 0;
        for (int i = 0; i < n; i++) {
            if (eligible[i]) {
                sum += weight(costs[i], min, scale, uniform);
            }
        }
        double target = u * sum;
        double cumulative = 0;
        for (int i = 0; i < n; i++) {
            if (eligible[i]) {
                cumulative += weight(costs[i], min, scale, uniform);
                if (target < cumulative) {
                    return i;
                }
            }
        }
        return last; // rounding at the top end
    }

    /** The unnormalized probability of one cost: 1 at the minimum, {@code exp(-1/T)} at the maximum. */
    static double weight(double cost, double min, double scale, boolean uniform) {
        return uniform ? 1 : Math.exp(-(cost - min) * scale);
    }
}
