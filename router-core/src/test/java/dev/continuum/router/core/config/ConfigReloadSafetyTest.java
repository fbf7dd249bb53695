package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.testing.LogCapture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A config file caught mid-write is never applied: the real file watcher delivers the events, and
 * the debounce runs on virtual time, so the test decides exactly when the quiet intervals end.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigReloadSafetyTest {
    private static final Duration QUIET = Duration.ofMillis(500);
    private static final String HEAD = """
            backends: [{name: a, url: "http://127.0.0.1:8000", weight: 2}]
            admin: {auth: {method: bearer_token, token: admin-secret}}
            """;
    private static final String KEYS = """
            api_keys:
              mode: blocking
              api_keys: [{key: k1, id: one}]
            """;

    @TempDir
    Path dir;
    Path file;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final ManualScheduler scheduler = new ManualScheduler();
    final List<RouterConfig> applied = new CopyOnWriteArrayList<>();
    ConfigStore store;

    @BeforeEach
    void start() throws IOException {
        file = dir.resolve("config.yaml");
        Files.writeString(file, HEAD.replace("weight: 2", "weight: 1") + KEYS);
        store = ConfigStore.builder(TestConfigs.loader(dir, Map.of())
                        .overrides(ConfigOverrides.none().withConfigFile(file)).build())
                .meterRegistry(registry).debounce(QUIET).reloadScheduler(scheduler).build();
        store.subscribe((before, after, plan) -> applied.add(after));
    }

    @AfterEach
    void stop() {
        store.stop().join();
    }

    private double reloads(String result) {
        return registry.get(ConfigStore.RELOADS_METER).tag("result", result).counter().count();
    }

    /** Waits for the watcher's event to reach the scheduler, then lets it run. */
    private void awaitEvent() {
        await().atMost(10, TimeUnit.SECONDS).until(scheduler::hasDue);
        scheduler.runDue();
    }

    @Test
    void aConfigWrittenInTwoPiecesWithAPauseNeverHasItsFirstPieceApplied() throws IOException {
        store.start().join();

        // Piece one: a valid config on its own, cut off at the line before api_keys.
        Files.writeString(file, HEAD);
        awaitEvent();
        // The pause: longer than one quiet interval, so a single debounce would have applied piece one.
        scheduler.advance(QUIET.plus(QUIET.dividedBy(2)));
        assertThat(applied).isEmpty();

        Files.writeString(file, KEYS, StandardOpenOption.APPEND);
        await().atMost(10, TimeUnit.SECONDS).until(() -> {
            scheduler.advance(QUIET);
            return !applied.isEmpty();
        });

        assertThat(applied).singleElement().satisfies(c -> {
            assertThat(c.backends().get(0).weight()).isEqualTo(2);
            assertThat(c.apiKeys().mode()).isEqualTo(ApiKeysConfig.Mode.BLOCKING);
        });
        assertThat(reloads("success")).isEqualTo(1);
        assertThat(reloads("failure") + reloads("unchanged")).isZero();
    }

    @Test
    void aFileTruncatedToZeroBytesIsRefusedAndTheRunningConfigStays() throws IOException {
        store.start().join();

        Files.write(file, new byte[0]);
        await().atMost(10, TimeUnit.SECONDS).until(() -> {
            scheduler.advance(QUIET);
            return reloads("failure") >= 1;
        });

        assertThat(applied).isEmpty();
        assertThat(store.current().backends()).hasSize(1);
        assertThat(store.current().apiKeys().mode()).isEqualTo(ApiKeysConfig.Mode.BLOCKING);
    }

    @Test
    void followsAKubernetesConfigMapSwapThroughTheDebounce() throws IOException {
        Path data1 = Files.createDirectories(dir.resolve("cm/..2026_01"));
        Files.writeString(data1.resolve("config.yaml"), HEAD.replace("weight: 2", "weight: 1") + KEYS);
        Files.createSymbolicLink(dir.resolve("cm/..data"), Path.of("..2026_01"));
        Path linked = dir.resolve("cm/config.yaml");
        Files.createSymbolicLink(linked, Path.of("..data/config.yaml"));
        store.stop().join();
        store = ConfigStore.builder(TestConfigs.loader(dir, Map.of())
                        .overrides(ConfigOverrides.none().withConfigFile(linked)).build())
                .meterRegistry(registry).debounce(QUIET).reloadScheduler(scheduler).build();
        store.subscribe((before, after, plan) -> applied.add(after));
        store.start().join();

        // kubelet: write the new version's directory, then swap the ..data link by a rename.
        Path data2 = Files.createDirectories(dir.resolve("cm/..2026_02"));
        Files.writeString(data2.resolve("config.yaml"), HEAD + KEYS);
        Files.createSymbolicLink(dir.resolve("cm/..data_tmp"), Path.of("..2026_02"));
        Files.move(dir.resolve("cm/..data_tmp"), dir.resolve("cm/..data"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        await().atMost(10, TimeUnit.SECONDS).until(() -> {
            scheduler.advance(QUIET);
            return !applied.isEmpty();
        });

        assertThat(store.current().backends().get(0).weight()).isEqualTo(2);
    }

    @Test
    void anExplicitReloadOfAnEmptyOrCommentOnlyFileIsRefused() throws IOException {
        for (String empty : List.of("", "\n  \n", "# being rewritten\n", "---\n...\n", "~\n")) {
            Files.writeString(file, empty);

            ReloadResult result = store.reload("admin");

            assertThat(result.result()).as("%s", empty).isEqualTo(ReloadResult.Outcome.FAILURE);
            assertThat(result.errors()).singleElement().asString()
                    .contains("the file is empty, and an empty file is never applied on reload");
        }
        assertThat(applied).isEmpty();
        assertThat(store.current().apiKeys().mode()).isEqualTo(ApiKeysConfig.Mode.BLOCKING);
    }

    @Test
    void anExplicitlyEmptyMappingIsNotAnEmptyDocumentButItsRelaxationsAreWarned() throws IOException {
        Files.writeString(file, "{}\n");
        try (LogCapture logs = LogCapture.of(ConfigStore.class)) {
            ReloadResult result = store.reload("sighup");

            assertThat(result.result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
            assertThat(result.warnings()).map(Problem::path)
                    .contains("api_keys.mode", "backends");
            assertThat(logs.warnings()).anyMatch(l -> l.contains("api_keys.mode: blocking -> permissive"))
                    .anyMatch(l -> l.contains("backends: 1 -> 0: every backend was removed"));
        }
    }

    @Test
    void aReloadThatOpensTheRouterUpIsLoggedAtWarnWithTheFieldPaths() throws IOException {
        Files.writeString(file, """
                backends: [{name: a, url: "http://127.0.0.1:8000"}]
                admin: {auth: {method: none}}
                api_keys: {mode: permissive}
                """);
        try (LogCapture logs = LogCapture.of(ConfigStore.class)) {
            ReloadResult result = store.reload("admin");

            assertThat(result.result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
            assertThat(logs.warnings())
                    .anyMatch(l -> l.contains("api_keys.mode: blocking -> permissive"))
                    .anyMatch(l -> l.contains("admin.auth.method: bearer_token -> none"))
                    .noneMatch(l -> l.contains("every backend was removed"));
        }
    }

    @Test
    void aTighteningReloadWarnsNothingExtra() throws IOException {
        Files.writeString(file, HEAD + KEYS);
        try (LogCapture logs = LogCapture.of(ConfigStore.class)) {
            assertThat(store.reload("admin").result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
            assertThat(logs.warnings()).noneMatch(l -> l.contains(" -> "));
        }
    }

    @Test
    void aFileLargerThanTheBoundIsRefusedWithoutLoadingIt() throws IOException {
        byte[] big = ("# " + "x".repeat(1022) + "\n").repeat(FileRead.MAX_BYTES / 1024 + 1)
                .getBytes(StandardCharsets.UTF_8);
        Files.write(file, big);

        ReloadResult result = store.reload("admin");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.FAILURE);
        assertThat(result.errors()).singleElement().asString().contains("larger than 4 MiB");
    }
}
