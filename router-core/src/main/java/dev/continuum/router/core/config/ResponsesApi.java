package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import org.jspecify.annotations.Nullable;

/**
 * {@code backends[].responses_api}: how a {@code /v1/responses} request reaches this backend (docs/ingresses.md).
 */
public enum ResponsesApi {
    /** Converted to a chat completion and sent to the backend's {@code /v1/chat/completions} (the default). */
    CONVERTED("converted"),
    /**
     * The backend serves the Responses API itself: the client's body goes to its {@code /v1/responses} as sent
     * (client routing fields removed), pinned by model alone.
     */
    NATIVE("native");

    private final String yamlName;

    ResponsesApi(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The name the YAML uses; also the readback's. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }

    /** Case-insensitive; null for anything else. */
    public static @Nullable ResponsesApi parse(String value) {
        for (ResponsesApi a : values()) {
            if (a.yamlName.equalsIgnoreCase(value.trim())) {
                return a;
            }
        }
        return null;
    }
}
