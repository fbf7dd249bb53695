package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The store's history of applied versions, its bound, and rollback through the reload path. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ConfigHistoryTest {
    @TempDir
    Path dir;

    private static String doc(int port) {
        return "server: {bind_address: \"127.0.0.1:8080\"}\nbackends: [{name: a, url: \"http://127.0.0.1:" + port + "\"}]\n";
    }

    @Test
    void keepsTheLastHundredVersionsNumberedForTheProcessLife() {
        ConfigHistory h = new ConfigHistory();
        RouterConfig c = RouterConfig.defaults();
        for (int i = 0; i < 130; i++) {
            h.add(Instant.EPOCH, "admin", c, null);
        }
        assertThat(h.versions()).hasSize(ConfigHistory.MAX_VERSIONS);
        assertThat(h.versions().get(0).number()).isEqualTo(31);
        assertThat(h.currentNumber()).isEqualTo(130);
        assertThat(h.version(30)).isEmpty();
        assertThat(h.version(31)).isPresent();
    }

    @Test
    void boundsTheBytesOfKeptDocuments() throws IOException {
        ConfigHistory h = new ConfigHistory();
        Path big = dir.resolve("big.yaml");
        Files.write(big, new byte[FileRead.MAX_BYTES]); // 4 MiB each: 8 fit in the 32 MiB bound
        FileRead read = FileRead.of(big);
        for (int i = 0; i < 12; i++) {
            h.add(Instant.EPOCH, "file-watch", RouterConfig.defaults(), read);
        }
        assertThat(h.versions()).hasSize(ConfigHistory.MAX_DOCUMENT_BYTES / FileRead.MAX_BYTES);
        assertThat(h.currentNumber()).isEqualTo(12);
    }

    @Test
    void rollbackRevalidatesAndAppliesAnOlderVersionAsANewOne() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, doc(8000));
        ConfigStore store = ConfigStore.builder(TestConfigs.loader(dir, Map.of()).build()).build();
        Files.writeString(file, doc(8001));
        assertThat(store.reload("sighup").result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(store.history().versions()).extracting(ConfigHistory.Version::trigger)
                .containsExactly("startup", "sighup");
        assertThat(store.history().version(1).orElseThrow().restorable()).isTrue();

        ReloadResult back = store.rollback(1);

        assertThat(back.result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(back.trigger()).isEqualTo("rollback");
        assertThat(store.current().backends().get(0).url().getPort()).isEqualTo(8000);
        assertThat(store.history().currentNumber()).isEqualTo(3);
        assertThat(store.history().version(3).orElseThrow().config()).isEqualTo(store.current());
        assertThat(store.rollback(1).result()).as("the running config already").isEqualTo(ReloadResult.Outcome.UNCHANGED);
        assertThat(store.rollback(99).result()).isEqualTo(ReloadResult.Outcome.FAILURE);
        assertThat(store.rollback(99).errors()).singleElement().asString().contains("version 99");
    }

    @Test
    void rollbackRefusesAVersionThatNoLongerValidates() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, doc(8000) + "api_keys: {mode: blocking, api_keys: [{key: \"${KEY}\"}]}\n");
        ConfigStore store = ConfigStore.builder(TestConfigs.loader(dir, Map.of("KEY", "k1")).build()).build();
        Files.writeString(file, doc(8001));
        store.reload("sighup");

        // Validated against the store's loader: the same environment, so version 1 still loads.
        assertThat(store.rollback(1).result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(store.current().apiKeys().keys()).hasSize(1);
    }

    @Test
    void validateAppliesNothingAndStrictTurnsNoEffectIntoErrors() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, doc(8000));
        ConfigStore store = ConfigStore.builder(TestConfigs.loader(dir, Map.of()).build()).build();
        RouterConfig before = store.current();

        LoadResult lax = store.validate(doc(9000) + "webui: {enabled: true}\n", false);
        LoadResult strict = store.validate(doc(9000) + "webui: {enabled: true}\n", true);

        assertThat(lax.ok()).isTrue();
        assertThat(lax.warnings()).singleElement().asString().contains("webui: accepted for compatibility");
        assertThat(strict.ok()).isFalse();
        assertThat(strict.errors()).singleElement().asString().endsWith(Problems.STRICT_SUFFIX);
        assertThat(store.current()).isSameAs(before);
        assertThat(store.history().currentNumber()).isEqualTo(1);
    }
}
