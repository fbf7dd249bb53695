package dev.continuum.router.shim.decisions;

import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The filters of {@code GET /admin/dynamo/decisions}; each null filter matches everything.
 *
 * @param model    the worker model name, exactly
 * @param worker   an instance ID either pin names
 * @param result   a result label ({@code overlap}, {@code load}, ...)
 * @param sinceMs  records made at or after this wall-clock millisecond
 * @param untilMs  records made before this wall-clock millisecond
 * @param beforeId only records with smaller ids (the next page's cursor)
 * @param limit    at most this many records, 1..{@link #MAX_LIMIT}
 */
public record DecisionQuery(@Nullable String model, @Nullable Long worker, @Nullable String result,
                            @Nullable Long sinceMs, @Nullable Long untilMs, long beforeId, int limit) {
    public static final int MAX_LIMIT = 500;
    public static final int DEFAULT_LIMIT = 50;

    public DecisionQuery {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("limit: " + limit + " (expected: 1.." + MAX_LIMIT + ")");
        }
    }

    Predicate<DecisionRecord> filter() {
        return r -> (model == null || model.equals(r.model()))
                && (worker == null || r.pins(worker))
                && (result == null || result.equals(r.result()))
                && (sinceMs == null || r.epochMillis() >= sinceMs)
                && (untilMs == null || r.epochMillis() < untilMs);
    }
}
