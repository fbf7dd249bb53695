package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code api_keys}: client authentication on the {@code /v1/*} routes. In {@code permissive} mode a
 * request without a key passes (a known key still gets its policy; an unknown one is refused); in
 * {@code blocking} mode a missing or unknown key gets 401.
 *
 * @param keys         the inline keys merged with those of {@code api_keys_file} (file entries after inline ones)
 * @param fileKeyCount how many of {@code keys}, at the end, came from {@code api_keys_file}; a readback
 *                     shows only the inline ones (plus the file's path), so it loads back to this record
 */
@JsonPropertyOrder({"mode", "api_keys_file", "api_keys"})
public record ApiKeysConfig(Mode mode, @Nullable Path apiKeysFile, @JsonIgnore List<ApiKeyConfig> keys,
                            @JsonIgnore int fileKeyCount) {
    public enum Mode {
        PERMISSIVE,
        BLOCKING
    }

    public ApiKeysConfig {
        keys = List.copyOf(keys);
        if (fileKeyCount < 0 || fileKeyCount > keys.size()) {
            throw new IllegalArgumentException("fileKeyCount: " + fileKeyCount + " (expected: 0.." + keys.size() + ")");
        }
    }

    /** Keys given inline only (no {@code api_keys_file} entries). */
    public ApiKeysConfig(Mode mode, @Nullable Path apiKeysFile, List<ApiKeyConfig> keys) {
        this(mode, apiKeysFile, keys, 0);
    }

    /** The keys written in the config file itself (the readback's {@code api_keys}). */
    @JsonProperty("api_keys")
    public List<ApiKeyConfig> inlineKeys() {
        return keys.subList(0, keys.size() - fileKeyCount);
    }

    /** The keys read from {@code api_keys_file}. */
    public List<ApiKeyConfig> fileKeys() {
        return keys.subList(keys.size() - fileKeyCount, keys.size());
    }

    public static ApiKeysConfig defaults() {
        return new ApiKeysConfig(Mode.PERMISSIVE, null, List.of());
    }
}
