package dev.continuum.router.admin;

import java.util.List;

/** Re-reads and applies the config file, as SIGHUP and the file watcher do. */
@FunctionalInterface
public interface ConfigReloader {
    /**
     * @param result  {@code success}, {@code unchanged} or {@code failure}
     * @param changes the changed sections with their reload class, e.g. {@code backends (immediate)}
     * @param errors  every validation error when refused (the running config keeps serving)
     */
    record Report(String result, List<String> changes, List<String> warnings, List<String> errors) {
        public Report {
            changes = List.copyOf(changes);
            warnings = List.copyOf(warnings);
            errors = List.copyOf(errors);
        }
    }

    Report reload(String trigger);
}
