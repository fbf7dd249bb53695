package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConfigStoreTest {
    private static final String BASE = """
            server: {bind_address: "127.0.0.1:8080"}
            backends: [{name: a, url: "http://127.0.0.1:8000"}]
            """;

    @TempDir
    Path dir;
    Path file;
    PrometheusMeterRegistry registry;
    ConfigStore store;
    final List<ReloadPlan> notified = new CopyOnWriteArrayList<>();
    final AtomicReference<RouterConfig> notifiedAfter = new AtomicReference<>();

    @BeforeEach
    void start() throws IOException {
        file = dir.resolve("config.yaml");
        Files.writeString(file, BASE);
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        store = ConfigStore.builder(TestConfigs.loader(dir, Map.of()).build()).meterRegistry(registry).build();
        store.subscribe((before, after, plan) -> {
            notified.add(plan);
            notifiedAfter.set(after);
        });
    }

    @AfterEach
    void stop() {
        store.stop().join();
    }

    private double reloads(String result) {
        return registry.get(ConfigStore.RELOADS_METER).tag("result", result).counter().count();
    }

    @Test
    void appliesAValidChangeAndNotifiesListenersOnceWithThePlan() throws IOException {
        RouterConfig before = store.current();
        Files.writeString(file, """
                server: {bind_address: "127.0.0.1:9090", idle_timeout: 5s}
                backends: [{name: a, url: "http://127.0.0.1:8000", weight: 5}]
                health_checks: {interval: 10s}
                logging: {level: debug}
                """);

        ReloadResult result = store.reload("test");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(result.trigger()).isEqualTo("test");
        assertThat(result.plan().changes()).containsExactly(
                new ReloadPlan.Change("server.bind_address", ReloadClass.PROCESS_RESTART),
                new ReloadPlan.Change("server.idle_timeout", ReloadClass.IMMEDIATE),
                new ReloadPlan.Change("backends", ReloadClass.IMMEDIATE),
                new ReloadPlan.Change("health_checks", ReloadClass.RESTART_SUBSYSTEM),
                new ReloadPlan.Change("logging", ReloadClass.IMMEDIATE));
        assertThat(result.warnings()).extracting(Problem::toString).containsExactly(
                "server.bind_address: changed; restart the process to apply it (the running value stays until then)");
        assertThat(notified).containsExactly(result.plan());
        RouterConfig now = store.current();
        assertThat(notifiedAfter.get()).isSameAs(now);
        assertThat(now.backends().get(0).weight()).isEqualTo(5);
        assertThat(now.logging().level()).isEqualTo(LoggingConfig.Level.DEBUG);
        assertThat(now.server().bindAddresses()).as("restart-only field keeps its running value")
                .isEqualTo(before.server().bindAddresses());
        assertThat(reloads("success")).isEqualTo(1);
        assertThat(registry.scrape()).contains("continuum_config_reloads_total{result=\"success\"} 1.0",
                "continuum_config_reloads_total{result=\"failure\"} 0.0");
    }

    @Test
    void refusesAnInvalidChangeAndKeepsTheRunningConfig() throws IOException {
        RouterConfig before = store.current();
        Files.writeString(file, BASE + "logging: {level: loud}\nbackends: []\n");

        ReloadResult result = store.reload("sighup");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.FAILURE);
        assertThat(result.errors()).extracting(Problem::toString)
                .contains("logging.level: \"loud\" (expected: one of trace, debug, info, warn, error)");
        assertThat(store.current()).isSameAs(before);
        assertThat(notified).isEmpty();
        assertThat(reloads("failure")).isEqualTo(1);
        assertThat(reloads("success")).isZero();
    }

    @Test
    void reportsUnchangedWithoutNotifying() {
        ReloadResult result = store.reload("admin");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.UNCHANGED);
        assertThat(result.plan().isEmpty()).isTrue();
        assertThat(notified).isEmpty();
        assertThat(reloads("unchanged")).isEqualTo(1);
    }

    @Test
    void reportsARestartOnlyChangeAsUnchangedWithARestartWarning() throws IOException {
        Files.writeString(file, BASE.replace("8080", "8081"));

        ReloadResult result = store.reload("admin");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.UNCHANGED);
        assertThat(result.plan().pendingRestart()).extracting(ReloadPlan.Change::section)
                .containsExactly("server.bind_address");
        assertThat(result.warnings()).isNotEmpty();
        assertThat(notified).isEmpty();
        assertThat(store.current().server().bindAddresses()).containsExactly(new BindAddress.Tcp("127.0.0.1", 8080));
    }

    @Test
    void aListenerThatThrowsStopsNeitherTheOthersNorTheSwap() throws IOException {
        AtomicInteger later = new AtomicInteger();
        store.subscribe((b, a, p) -> {
            throw new IllegalStateException("listener bug");
        });
        store.subscribe((b, a, p) -> later.incrementAndGet());
        Files.writeString(file, BASE + "logging: {level: debug}\n");

        ReloadResult result = store.reload("test");

        assertThat(result.result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(later).hasValue(1);
        assertThat(notified).hasSize(1);
        assertThat(store.current().logging().level()).isEqualTo(LoggingConfig.Level.DEBUG);
    }

    @Test
    void anUnsubscribedListenerIsNotNotified() throws IOException {
        AtomicInteger calls = new AtomicInteger();
        ConfigStore.Subscription s = store.subscribe((b, a, p) -> calls.incrementAndGet());
        s.close();
        Files.writeString(file, BASE + "logging: {level: debug}\n");

        store.reload("test");

        assertThat(calls).hasValue(0);
    }

    @Test
    void serializesConcurrentReloads() throws Exception {
        CountDownLatch inListener = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        store.subscribe((b, a, p) -> {
            inListener.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        Files.writeString(file, BASE + "logging: {level: debug}\n");
        AtomicReference<ReloadResult> first = new AtomicReference<>();
        AtomicReference<ReloadResult> second = new AtomicReference<>();
        Thread t1 = new Thread(() -> first.set(store.reload("one")));
        t1.start();
        inListener.await(10, TimeUnit.SECONDS);
        Thread t2 = new Thread(() -> second.set(store.reload("two")));
        t2.start();

        await().atMost(5, TimeUnit.SECONDS).until(() -> t2.getState() == Thread.State.WAITING);
        assertThat(second.get()).as("the second reload waits for the first").isNull();
        release.countDown();
        t1.join();
        t2.join();

        assertThat(first.get().result()).isEqualTo(ReloadResult.Outcome.SUCCESS);
        assertThat(second.get().result()).isEqualTo(ReloadResult.Outcome.UNCHANGED);
    }

    @Test
    void refusesToStartFromAnInvalidConfig() throws IOException {
        Files.writeString(file, "logging: {level: loud}\n");

        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> ConfigStore.builder(TestConfigs.loader(dir, Map.of()).build()).build())
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("logging.level: \"loud\" (expected: one of trace, debug, info, warn, error)"
                        + " [config.yaml:1:18]");
    }

    @Test
    void serializesTheResultForTheAdminApi() {
        Map<String, Object> tree = store.reload("admin").toTree();

        assertThat(tree).containsEntry("result", "unchanged").containsEntry("trigger", "admin")
                .containsEntry("errors", List.of()).containsKeys("at", "warnings", "changes");
    }
}
