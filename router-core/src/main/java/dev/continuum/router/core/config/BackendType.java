package dev.continuum.router.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * {@code backends[].type}. This build relays the OpenAI wire unchanged to every type that speaks
 * it; {@code anthropic} and {@code gemini} need body translation and are refused by validation.
 */
public enum BackendType {
    OPENAI("openai"),
    ANTHROPIC("anthropic"),
    GEMINI("gemini"),
    OLLAMA("ollama"),
    VLLM("vllm"),
    LOCALAI("localai"),
    LMSTUDIO("lmstudio"),
    LLAMACPP("llamacpp"),
    MLXCEL("mlxcel"),
    CONTINUUM("continuum");

    private final String yamlName;

    BackendType(String yamlName) {
        this.yamlName = yamlName;
    }

    /** The name the YAML uses; also the readback's. */
    @JsonValue
    public String yamlName() {
        return yamlName;
    }

    /** True when requests are forwarded byte for byte (no translation). */
    public boolean speaksOpenAiWire() {
        return this != ANTHROPIC && this != GEMINI;
    }

    /** Case-insensitive; also accepts {@code continuum-router}, {@code llama.cpp}, {@code lm-studio}. */
    public static @Nullable BackendType parse(String value) {
        String v = value.trim().toLowerCase(Locale.ROOT).replace("_", "").replace("-", "").replace(".", "");
        if (v.equals("continuumrouter")) {
            return CONTINUUM;
        }
        for (BackendType t : values()) {
            if (t.yamlName.equals(v)) {
                return t;
            }
        }
        return null;
    }
}
