package dev.continuum.router.core.config;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one {@link ConfigStore#reload} did, for SIGHUP logs and {@code POST /admin/config/reload}.
 *
 * @param result   {@code success} (swapped and notified), {@code failure} (refused; the running config
 *                 stays) or {@code unchanged} (nothing to apply)
 * @param trigger  who asked: {@code sighup}, {@code admin}, {@code file-watch}, ...
 * @param errors   why a {@code failure} was refused
 * @param warnings including one per change that needs a process restart
 * @param plan     the changes between the running config and the file (also for {@code unchanged}
 *                 when only restart-only fields changed)
 */
public record ReloadResult(Outcome result, String trigger, Instant at, List<Problem> errors, List<Problem> warnings,
                           ReloadPlan plan) {
    public enum Outcome {
        SUCCESS,
        FAILURE,
        UNCHANGED;

        /** The metric label and the serialized value. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public ReloadResult {
        errors = List.copyOf(errors);
        warnings = List.copyOf(warnings);
    }

    /** A JSON-ready tree: {@code {"result":"success","trigger":..,"errors":["path: msg"],..,"changes":[..]}}. */
    public Map<String, Object> toTree() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("result", result.label());
        m.put("trigger", trigger);
        m.put("at", at.toString());
        m.put("errors", errors.stream().map(Problem::toString).toList());
        m.put("warnings", warnings.stream().map(Problem::toString).toList());
        m.put("changes", plan.changes().stream().map(c -> Map.of("section", c.section(),
                "reload_class", c.reloadClass().name().toLowerCase(Locale.ROOT))).toList());
        return m;
    }
}
