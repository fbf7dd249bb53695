package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigFileWatcherTest {
    private static final Duration DEBOUNCE = Duration.ofMillis(300);

    @TempDir
    Path dir;
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ConfigStore store;

    @AfterEach
    void stop() {
        if (store != null) {
            store.stop().join();
        }
    }

    private static String config(int weight) {
        return "backends: [{name: a, url: \"http://127.0.0.1:8000\", weight: " + weight + "}]\n";
    }

    private ConfigStore watch(Path file) {
        store = ConfigStore.builder(TestConfigs.loader(dir, Map.of()).overrides(ConfigOverrides.none().withConfigFile(file)).build())
                .meterRegistry(registry).debounce(DEBOUNCE).build();
        store.start().join();
        return store;
    }

    private double reloads(String result) {
        return registry.get(ConfigStore.RELOADS_METER).tag("result", result).counter().count();
    }

    private int weight() {
        return store.current().backends().get(0).weight();
    }

    @Test
    void seesAnEditorsAtomicRename() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1));
        watch(file);

        Path temp = dir.resolve(".config.yaml.swp");
        Files.writeString(temp, config(2));
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);

        await().atMost(10, TimeUnit.SECONDS).until(() -> weight() == 2);
        assertThat(reloads("success")).isEqualTo(1);
    }

    @Test
    void reloadsOnceForABurstOfWrites() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1));
        watch(file);

        for (int w = 2; w <= 6; w++) {
            Files.writeString(file, config(w));
        }

        await().atMost(10, TimeUnit.SECONDS).until(() -> reloads("success") + reloads("unchanged") >= 1);
        await().during(DEBOUNCE.multipliedBy(3)).atMost(DEBOUNCE.multipliedBy(5))
                .until(() -> reloads("success") + reloads("unchanged") + reloads("failure") == 1);
        assertThat(weight()).isEqualTo(6);
    }

    @Test
    void seesAKubernetesConfigMapSymlinkSwap() throws IOException {
        Files.createDirectories(dir.resolve("..2026_01"));
        Files.writeString(dir.resolve("..2026_01/config.yaml"), config(1));
        Files.createSymbolicLink(dir.resolve("..data"), Path.of("..2026_01"));
        Path file = dir.resolve("config.yaml");
        Files.createSymbolicLink(file, Path.of("..data/config.yaml"));
        watch(file);

        Files.createDirectories(dir.resolve("..2026_02"));
        Files.writeString(dir.resolve("..2026_02/config.yaml"), config(3));
        Files.createSymbolicLink(dir.resolve("..data_tmp"), Path.of("..2026_02"));
        Files.move(dir.resolve("..data_tmp"), dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);

        await().atMost(10, TimeUnit.SECONDS).until(() -> weight() == 3);
    }

    @Test
    void seesAChangeOfTheApiKeysFile() throws IOException {
        Path keysDir = Files.createDirectories(dir.resolve("keys"));
        Files.writeString(keysDir.resolve("keys.yaml"), "- {key: k1, id: one}\n");
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1) + "api_keys: {api_keys_file: keys/keys.yaml}\n");
        watch(file);

        Files.writeString(keysDir.resolve("keys.yaml"), "- {key: k1, id: one}\n- {key: k2, id: two}\n");

        await().atMost(10, TimeUnit.SECONDS).until(() -> store.current().apiKeys().keys().size() == 2);
    }

    @Test
    void neverAppliesAFileTruncatedToZeroBytes() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1) + "api_keys: {mode: blocking, api_keys: [{key: k1, id: one}]}\n");
        watch(file);

        Files.write(file, new byte[0]);

        await().atMost(10, TimeUnit.SECONDS).until(() -> reloads("failure") == 1);
        assertThat(reloads("success")).isZero();
        assertThat(weight()).isEqualTo(1);
        assertThat(store.current().apiKeys().mode()).isEqualTo(ApiKeysConfig.Mode.BLOCKING);

        // The writer finishes: the complete file is applied through the same watcher.
        Files.writeString(file, config(2) + "api_keys: {mode: blocking, api_keys: [{key: k1, id: one}]}\n");
        await().atMost(10, TimeUnit.SECONDS).until(() -> weight() == 2);
    }

    @Test
    void ignoresOtherFilesInTheDirectory() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1));
        watch(file);

        Files.writeString(dir.resolve("unrelated.txt"), "x");

        await().during(DEBOUNCE.multipliedBy(3)).atMost(DEBOUNCE.multipliedBy(5))
                .until(() -> reloads("success") + reloads("unchanged") + reloads("failure") == 0);
    }

    @Test
    void stopsWatchingWhenClosed() throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, config(1));
        ConfigStore watching = watch(file);
        var stopped = watching.stop();
        assertThat(watching.stop()).isSameAs(stopped);
        stopped.join();
        assertThat(watching.state()).isEqualTo(dev.continuum.router.core.lifecycle.LifecycleState.STOPPED);

        Files.writeString(file, config(2));

        await().during(DEBOUNCE.multipliedBy(3)).atMost(DEBOUNCE.multipliedBy(5)).until(() -> weight() == 1);
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("continuum-config-watcher"));
        await().atMost(10, TimeUnit.SECONDS).until(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("continuum-config-reload") && t.isAlive()));
    }
}
