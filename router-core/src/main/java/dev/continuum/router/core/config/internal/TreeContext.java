package dev.continuum.router.core.config.internal;

import dev.continuum.router.core.config.Problems;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What every node of one load pass shares: where problems go, the environment for interpolation,
 * and the index of source locations by path (so a problem line can say where to look).
 */
public final class TreeContext {
    /**
     * A bound on nodes after alias expansion. snakeyaml caps alias events, but nested aliases still
     * multiply (two aliases per level over 25 levels is 33M nodes); a config never needs this many.
     */
    public static final int MAX_NODES = 100_000;

    private final Problems problems;
    private final Map<String, String> env;
    private final Map<String, String> locations = new LinkedHashMap<>();
    private int nodes;

    public TreeContext(Problems problems, Map<String, String> env) {
        this.problems = problems;
        this.env = Map.copyOf(env);
    }

    public Problems problems() {
        return problems;
    }

    public Map<String, String> env() {
        return env;
    }

    /** Path to {@code file:line:column} (or another origin) for every node built in this pass. */
    public Map<String, String> locations() {
        return locations;
    }

    void recordLocation(String path, String location) {
        if (!location.isEmpty()) {
            locations.putIfAbsent(path, location);
        }
    }

    /** False once the node budget is spent. */
    boolean countNode() {
        return ++nodes <= MAX_NODES;
    }
}
