package dev.continuum.router.core.config;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

/** Loading helpers for the config tests: a fixed clock, no real environment, no real search path. */
final class TestConfigs {
    static final Clock CLOCK = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
    /** A backend so that tests about other sections do not also get the "no enabled backend" warning. */
    static final String ONE_BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";

    private TestConfigs() {
    }

    static ConfigLoader.Builder loader(Path dir, Map<String, String> env) {
        return ConfigLoader.builder()
                .environment(env)
                .clock(CLOCK)
                .searchPath(new ConfigSearchPath(dir, dir.resolve("home"), dir.resolve("etc")));
    }

    static LoadResult load(String yaml) {
        return load(yaml, Map.of());
    }

    static LoadResult load(String yaml, Map<String, String> env) {
        return loader(Path.of("").toAbsolutePath(), env).build().loadString(yaml);
    }

    static List<String> lines(LoadResult result) {
        return result.problems().stream().map(Problem::toString).toList();
    }

    static List<String> errorLines(LoadResult result) {
        return result.errors().stream().map(Problem::toString).toList();
    }

    static List<String> warningLines(LoadResult result) {
        return result.warnings().stream().map(Problem::toString).toList();
    }
}
