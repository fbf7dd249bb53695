package dev.continuum.router.kv.artifacts;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ArtifactLocationTest {
    @Test
    void readsTheFormsACardPathTakes() {
        assertThat(ArtifactLocation.parse("/models/qwen/tokenizer.json"))
                .isEqualTo(new ArtifactLocation.Local(Path.of("/models/qwen/tokenizer.json")));
        assertThat(ArtifactLocation.parse("file:///models/qwen/tokenizer.json"))
                .isEqualTo(new ArtifactLocation.Local(Path.of("/models/qwen/tokenizer.json")));
        assertThat(ArtifactLocation.parse("https://w1:8080/v1/artifacts/tokenizer.json"))
                .isEqualTo(new ArtifactLocation.Http(URI.create("https://w1:8080/v1/artifacts/tokenizer.json")));
        ArtifactLocation hf = ArtifactLocation.parse("hf://Qwen/Qwen3-0.6B@a1b2c3/sub/tokenizer.json");
        assertThat(hf).isEqualTo(new ArtifactLocation.HuggingFace("Qwen/Qwen3-0.6B", "a1b2c3", "sub/tokenizer.json"));
        assertThat(((ArtifactLocation.HuggingFace) hf).uri("https://hub.internal/"))
                .isEqualTo(URI.create("https://hub.internal/Qwen/Qwen3-0.6B/resolve/a1b2c3/sub/tokenizer.json"));
    }

    @Test
    void refusesWhatCannotBeFetchedSafely() {
        assertThat(ArtifactLocation.parse("hf://Qwen/Qwen3-0.6B/../../etc/passwd")).isNull();
        assertThat(ArtifactLocation.parse("hf://Qwen/tokenizer.json")).isNull();
        assertThat(ArtifactLocation.parse("hf://Qw%en/r/f.json")).isNull();
        assertThat(ArtifactLocation.parse("ftp://h/f.json")).isNull();
        assertThat(ArtifactLocation.parse("http:///no-host")).isNull();
        assertThat(ArtifactLocation.parse("/a\0b")).isNull();
        assertThat(ArtifactLocation.parse("/" + "a".repeat(ArtifactLocation.MAX_PATH_CHARS))).isNull();
        assertThat(ArtifactLocation.parse("")).isNull();
    }
}
