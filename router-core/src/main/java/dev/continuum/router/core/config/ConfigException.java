package dev.continuum.router.core.config;

/** A config that cannot be used; the message lists every error (and warning) with its location. */
public final class ConfigException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient LoadResult result;

    public ConfigException(LoadResult result) {
        super("invalid configuration" + (result.source() == null ? "" : " in " + result.source()) + ":\n  "
                + String.join("\n  ", result.report()));
        this.result = result;
    }

    public LoadResult result() {
        return result;
    }
}
