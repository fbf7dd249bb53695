package dev.continuum.router.core.config;

import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Values given on the command line; each non-null one beats the environment and the file. They are
 * validated with the same rules (and paths) as the YAML keys they replace.
 *
 * @param configFile      {@code --config}: read this file instead of searching; relative to the working directory
 * @param bindAddresses   replaces {@code server.bind_address}
 * @param logLevel        replaces {@code logging.level}
 * @param metricsEnabled  replaces {@code metrics.enabled}
 * @param metricsEndpoint replaces {@code metrics.endpoint}
 */
public record ConfigOverrides(
        @Nullable Path configFile,
        @Nullable List<String> bindAddresses,
        @Nullable String logLevel,
        @Nullable Boolean metricsEnabled,
        @Nullable String metricsEndpoint) {

    public ConfigOverrides {
        bindAddresses = bindAddresses == null ? null : List.copyOf(bindAddresses);
    }

    public static ConfigOverrides none() {
        return new ConfigOverrides(null, null, null, null, null);
    }

    public ConfigOverrides withConfigFile(@Nullable Path file) {
        return new ConfigOverrides(file, bindAddresses, logLevel, metricsEnabled, metricsEndpoint);
    }

    public ConfigOverrides withBindAddresses(@Nullable List<String> addresses) {
        return new ConfigOverrides(configFile, addresses, logLevel, metricsEnabled, metricsEndpoint);
    }

    public ConfigOverrides withLogLevel(@Nullable String level) {
        return new ConfigOverrides(configFile, bindAddresses, level, metricsEnabled, metricsEndpoint);
    }

    public ConfigOverrides withMetricsEnabled(@Nullable Boolean enabled) {
        return new ConfigOverrides(configFile, bindAddresses, logLevel, enabled, metricsEndpoint);
    }

    public ConfigOverrides withMetricsEndpoint(@Nullable String endpoint) {
        return new ConfigOverrides(configFile, bindAddresses, logLevel, metricsEnabled, endpoint);
    }
}
