package dev.continuum.router.sim;

import java.util.Locale;

/**
 * One pool of identical simulated workers: a Dynamo namespace, a served model, a role, how many workers and how
 * many data-parallel ranks each one runs ({@code data_parallel_size} in its card; one kv_metrics sample per rank).
 *
 * @param component the Dynamo component the pool registers under; by default {@code prefill}, {@code decode} or,
 *                  for an aggregated pool, {@code backend}
 */
public record Pool(String namespace, String model, DirectFrontend.Role role, int workers, int dpSize,
                   String component) {
    public Pool {
        if (namespace.isBlank() || model.isBlank() || component.isBlank()) {
            throw new IllegalArgumentException("pool: namespace, model and component must not be blank");
        }
        if (workers < 1) {
            throw new IllegalArgumentException("pool workers: " + workers + " (expected: >= 1)");
        }
        if (dpSize < 1) {
            throw new IllegalArgumentException("pool dp: " + dpSize + " (expected: >= 1)");
        }
    }

    /** A pool of one-rank workers under the role's default component. */
    public static Pool of(String namespace, String model, DirectFrontend.Role role, int workers) {
        return new Pool(namespace, model, role, workers, 1, defaultComponent(role));
    }

    public Pool withDp(int size) {
        return new Pool(namespace, model, role, workers, size, component);
    }

    public Pool withComponent(String name) {
        return new Pool(namespace, model, role, workers, dpSize, name);
    }

    static String defaultComponent(DirectFrontend.Role role) {
        return switch (role) {
            case PREFILL -> "prefill";
            case DECODE -> "decode";
            case AGGREGATED -> "backend";
        };
    }

    /**
     * The command-line form: comma-separated {@code key=value} pairs, keys {@code namespace}, {@code model},
     * {@code role} ({@code prefill}, {@code decode}, {@code aggregated}), {@code workers}, {@code dp} and
     * {@code component}; {@code model} may contain {@code /}, so no other separator is used. Missing keys take
     * {@code namespace=dynamo}, {@code role=aggregated}, {@code workers=1}, {@code dp=1}; {@code model} is required.
     */
    public static Pool parse(String spec) {
        String namespace = "dynamo";
        String model = null;
        DirectFrontend.Role role = DirectFrontend.Role.AGGREGATED;
        int workers = 1;
        int dp = 1;
        String component = null;
        for (String pair : spec.split(",")) {
            int eq = pair.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--pool " + spec + ": '" + pair + "' is not key=value");
            }
            String key = pair.substring(0, eq).trim();
            String value = pair.substring(eq + 1).trim();
            switch (key) {
                case "namespace" -> namespace = value;
                case "model" -> model = value;
                case "role" -> role = DirectFrontend.Role.valueOf(value.toUpperCase(Locale.ROOT));
                case "workers" -> workers = Integer.parseInt(value);
                case "dp" -> dp = Integer.parseInt(value);
                case "component" -> component = value;
                default -> throw new IllegalArgumentException("--pool " + spec + ": unknown key " + key);
            }
        }
        if (model == null) {
            throw new IllegalArgumentException("--pool " + spec + ": model=... is required");
        }
        return new Pool(namespace, model, role, workers, dp, component == null ? defaultComponent(role) : component);
    }
}
