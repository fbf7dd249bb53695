package dev.continuum.router.core.config;

import java.util.ArrayList;
import java.util.List;

/** Collects every error and warning of one validation pass, in the order found. Not thread-safe. */
public final class Problems {
    private final List<Problem> all = new ArrayList<>();

    public void error(String path, String message) {
        all.add(new Problem(Problem.Severity.ERROR, path, message));
    }

    public void warning(String path, String message) {
        all.add(new Problem(Problem.Severity.WARNING, path, message));
    }

    /** {@code path: value (expected: expectation)}, with the value rendered as YAML would show it. */
    public void invalid(String path, Object value, String expectation) {
        error(path, render(value) + " (expected: " + expectation + ")");
    }

    public boolean hasErrors() {
        return all.stream().anyMatch(p -> p.severity() == Problem.Severity.ERROR);
    }

    public List<Problem> errors() {
        return all.stream().filter(p -> p.severity() == Problem.Severity.ERROR).toList();
    }

    public List<Problem> warnings() {
        return all.stream().filter(p -> p.severity() == Problem.Severity.WARNING).toList();
    }

    public List<Problem> all() {
        return List.copyOf(all);
    }

    /** Strings are quoted so an empty or blank value is visible; secrets must never be passed here. */
    public static String render(Object value) {
        if (value instanceof String s) {
            return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
        }
        if (value instanceof Secret) {
            return Secret.MASK;
        }
        return String.valueOf(value);
    }
}
