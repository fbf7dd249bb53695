package dev.continuum.router.core.config;

import java.util.ArrayList;
import java.util.List;

/** Collects every error and warning of one validation pass, in the order found. Not thread-safe. */
public final class Problems {
    /** Appended to a "has no effect" finding that strict mode turned into an error. */
    public static final String STRICT_SUFFIX = " (refused: strict mode turns settings without effect into errors)";

    private final List<Problem> all = new ArrayList<>();
    private boolean strict;

    /** Strict mode ({@code config validate --strict}, {@code server.strict_config}): see {@link #noEffect}. */
    public void strict(boolean on) {
        this.strict = on;
    }

    public boolean strict() {
        return strict;
    }

    /**
     * A setting that loads but does nothing in this build (a Rust-router section not implemented, an unknown
     * key): a warning, or an error in strict mode, so a config that must act as written is refused.
     */
    public void noEffect(String path, String message) {
        if (strict) {
            error(path, message + STRICT_SUFFIX);
        } else {
            warning(path, message);
        }
    }

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
