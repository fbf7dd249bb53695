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

    /**
     * A URL as a message may show it: {@code http://user:pw@host} becomes {@code http://****@host}, and
     * a bare {@code user:pw@host:port} becomes {@code ****@host:port}, because a URL may carry a password.
     * Only the authority is looked at; an {@code @} in a path, query or fragment stays.
     */
    public static String maskUserInfo(String url) {
        int scheme = url.indexOf("://");
        int start = scheme < 0 ? 0 : scheme + 3;
        int end = url.length();
        for (char c : new char[] {'/', '?', '#'}) {
            int i = url.indexOf(c, start);
            if (i >= 0) {
                end = Math.min(end, i);
            }
        }
        int at = url.lastIndexOf('@', end - 1);
        return at >= start ? url.substring(0, start) + "****" + url.substring(at) : url;
    }
}
