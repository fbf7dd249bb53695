package dev.continuum.router.core.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of one load: the config when there was no error, and every problem found.
 *
 * @param config    null when any problem is an error
 * @param source    the file read, or null (built-in defaults, an in-memory document)
 * @param problems  errors and warnings in the order found
 * @param locations where each path's value came from ({@code config.yaml:12:5}, {@code environment variable X})
 */
public record LoadResult(@Nullable RouterConfig config, @Nullable Path source, List<Problem> problems,
                         Map<String, String> locations) {

    public LoadResult {
        problems = List.copyOf(problems);
        locations = Map.copyOf(locations);
    }

    public boolean ok() {
        return config != null;
    }

    public List<Problem> errors() {
        return problems.stream().filter(p -> p.severity() == Problem.Severity.ERROR).toList();
    }

    public List<Problem> warnings() {
        return problems.stream().filter(p -> p.severity() == Problem.Severity.WARNING).toList();
    }

    /** The config, or a {@link ConfigException} listing every error. */
    public RouterConfig orThrow() {
        if (config == null) {
            throw new ConfigException(this);
        }
        return config;
    }

    /** Where the value at the problem's path (or its nearest ancestor that exists) was written, or "". */
    public String locationOf(Problem problem) {
        String path = problem.path();
        while (true) {
            String at = locations.get(path);
            if (at != null) {
                return at;
            }
            if (path.isEmpty()) {
                return "";
            }
            int cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
            path = cut < 0 ? "" : path.substring(0, cut);
        }
    }

    /** One line per problem: {@code error: backends[0].url: "x" (expected: ...) [config.yaml:7:10]}. */
    public List<String> report() {
        List<String> lines = new ArrayList<>();
        for (Problem p : problems) {
            String at = locationOf(p);
            lines.add(p.severity().name().toLowerCase(Locale.ROOT) + ": " + p + (at.isEmpty() ? "" : " [" + at + "]"));
        }
        return lines;
    }
}
