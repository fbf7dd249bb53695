package dev.continuum.router.core.config;

import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code api_keys}: client authentication on the {@code /v1/*} routes. In {@code permissive} mode a
 * request without a key passes (a known key still gets its policy; an unknown one is refused); in
 * {@code blocking} mode a missing or unknown key gets 401.
 *
 * @param keys the inline keys merged with those of {@code api_keys_file} (file entries after inline ones)
 */
public record ApiKeysConfig(Mode mode, @Nullable Path apiKeysFile, List<ApiKeyConfig> keys) {
    public enum Mode {
        PERMISSIVE,
        BLOCKING
    }

    public ApiKeysConfig {
        keys = List.copyOf(keys);
    }

    public static ApiKeysConfig defaults() {
        return new ApiKeysConfig(Mode.PERMISSIVE, null, List.of());
    }
}
