package dev.continuum.router.shim;

import org.jspecify.annotations.Nullable;

/**
 * The KV-aware picker's knobs, read once per pick (a reload applies to the next request). Bound from
 * {@code dynamo.kv} by router-app; the ranges are the config section's.
 *
 * @param overlapScoreCredit  blocks of credit per block of the prompt a rank already holds
 * @param prefillLoadScale    weight of the prefill term against the decode term
 * @param routerTemperature   0: the lowest cost wins; above 0: softmax sampling over the costs
 * @param conditionalDisaggregation whether a decode worker may prefill a request itself
 * @param decodeBusyThreshold with conditional disaggregation, the share of {@code total_kv_blocks} the decode
 *                            winner's projected blocks must stay within for a bypass; null: no such check
 */
public record KvPickerSettings(double overlapScoreCredit, double prefillLoadScale, double routerTemperature,
                               boolean conditionalDisaggregation, @Nullable Double decodeBusyThreshold) {
    /** Upstream's defaults: full credit, unit scale, deterministic, no conditional disaggregation. */
    public static final KvPickerSettings DEFAULTS = new KvPickerSettings(1.0, 1.0, 0.0, false, null);

    public KvPickerSettings {
        check("overlapScoreCredit", overlapScoreCredit);
        check("prefillLoadScale", prefillLoadScale);
        check("routerTemperature", routerTemperature);
        if (decodeBusyThreshold != null) {
            check("decodeBusyThreshold", decodeBusyThreshold);
        }
    }

    private static void check(String name, double v) {
        if (!(v >= 0) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: a finite number >= 0)");
        }
    }
}
