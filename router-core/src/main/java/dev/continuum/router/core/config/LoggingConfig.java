package dev.continuum.router.core.config;

/** {@code logging}: root level ({@code RUST_LOG} and {@code --log-level} override it) and line format. */
public record LoggingConfig(Level level, Format format) {
    public enum Level {
        TRACE,
        DEBUG,
        INFO,
        WARN,
        ERROR
    }

    public enum Format {
        TEXT,
        JSON
    }

    public static LoggingConfig defaults() {
        return new LoggingConfig(Level.INFO, Format.TEXT);
    }
}
