package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.core.lifecycle.Lifecycle;
import dev.continuum.router.core.lifecycle.LifecycleStack;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process's one teardown path: every component on the lifecycle stack, started in dependency order and
 * stopped in reverse on close, on a start that fails half-way, and on SIGTERM in a real child JVM; no thread
 * the router started outlives it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RouterLifecycleTest {
    /** The order of docs/operations.md. */
    private static final List<String> START_ORDER = List.of("meter registry", "JVM metrics", "continuum-blocking threads",
            "Dynamo discovery", "event bus supervisor", "kv_cache_index sources", "NATS connection",
            "load supervisor",
            "load following discovery",
            "picker upkeep", "replica sync", "KvIndexWriter", "kv supervisor", "kv-events following discovery", "kv routing",
            "broker coverage reporter", "admin-fleet-events threads", "HTTP server", "config store");
    /** Prefixes of every thread the router's own components start. */
    private static final List<String> ROUTER_THREADS = List.of("continuum-io-", "continuum-blocking-", "continuum-load-",
            "load-supervisor-", "dynamo-discovery-", "dynamo-file-store-", "continuum-config-watcher",
            "continuum-config-reload", "continuum-picker-upkeep", "continuum-kv-artifacts-", "continuum-kv-events-",
            "continuum-kv-sources-", "continuum-kv-warm-up", "kv-supervisor-", "kv-index-writer", "event-bus-supervisor-", "continuum-event-bus-",
            "broker-coverage-", "continuum-nats-", "continuum-replica-sync", "admin-fleet-events");

    @TempDir
    Path dir;
    private final TestUpstream upstream = TestUpstream.start("main").models("m").defaultReply(Reply.echo());
    private final List<String> started = new CopyOnWriteArrayList<>();
    private final List<String> stopped = new CopyOnWriteArrayList<>();
    private final LifecycleStack.Listener recording = new LifecycleStack.Listener() {
        @Override
        public void started(Lifecycle component) {
            started.add(component.toString());
        }

        @Override
        public void stopped(Lifecycle component) {
            stopped.add(component.toString());
        }
    };

    @AfterEach
    void tearDown() {
        upstream.close();
    }

    private static long routerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && ROUTER_THREADS.stream().anyMatch(p -> t.getName().startsWith(p))).count();
    }

    private Path config(String bind) throws IOException {
        Path fileStore = Files.createDirectories(dir.resolve("store"));
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, """
                server:
                  bind_address: "%s"
                  shutdown_grace_period: 1s
                backends:
                  - name: main
                    url: %s
                    models: [m]
                dynamo:
                  enabled: true
                  discovery:
                    source: file
                    file: {root: "%s", namespace: dynamo}
                """.formatted(bind, upstream.baseUrl(), fileStore));
        return file;
    }

    private static ConfigLoader loader(Path file) {
        DynamoSections sections = DynamoSections.create(Map.of());
        return ConfigLoader.builder().environment(Map.of())
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build();
    }

    private static List<String> reversed(List<String> names) {
        List<String> out = new ArrayList<>(names);
        java.util.Collections.reverse(out);
        return out;
    }

    @Test
    void closeStopsEveryComponentInReverseStartOrderOnceAndLeavesNoThread() throws Exception {
        await().atMost(20, TimeUnit.SECONDS).until(() -> routerThreads() == 0);
        Path file = config("127.0.0.1:0");
        RouterProcess router = RouterProcess.start(loader(file), DynamoSections.create(Map.of()), recording);
        assertThat(started).containsExactlyElementsOf(START_ORDER);
        await().until(() -> router.discovery().registry().snapshot().connected());
        assertThat(routerThreads()).isPositive();

        CompletableFuture<Void> second = CompletableFuture.runAsync(router::close);
        router.close();
        second.get(30, TimeUnit.SECONDS);

        assertThat(stopped).containsExactlyElementsOf(reversed(START_ORDER));
        assertThat(router.server().ready()).isFalse();
        await().atMost(20, TimeUnit.SECONDS).until(() -> routerThreads() == 0);
    }

    @Test
    void aStartThatFailsHalfWayStopsWhatHadStartedInReverse() throws Exception {
        await().atMost(20, TimeUnit.SECONDS).until(() -> routerThreads() == 0);
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Path file = config("127.0.0.1:" + taken.getLocalPort());

            assertThatThrownBy(() -> RouterProcess.start(loader(file), DynamoSections.create(Map.of()), recording))
                    .hasMessageContaining("cannot listen on");

            List<String> beforeTheServer = START_ORDER.subList(0, START_ORDER.indexOf("HTTP server"));
            assertThat(started).containsExactlyElementsOf(beforeTheServer);
            assertThat(stopped).containsExactlyElementsOf(reversed(beforeTheServer));
            await().atMost(20, TimeUnit.SECONDS).until(() -> routerThreads() == 0);
        }
    }

    @Test
    void sigtermTearsDownThroughTheSameStackInAChildProcess() throws Exception {
        Path file = config("127.0.0.1:0");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "serve", "--config", file.toString())
                .redirectErrorStream(true).start();
        try {
            Pattern lifecycleLine = Pattern.compile("LifecycleStack - (started|stopped) (.+)$");
            List<String> childStarted = new ArrayList<>();
            List<String> childStopped = new ArrayList<>();
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null) {
                Matcher m = lifecycleLine.matcher(line);
                if (m.find()) {
                    (m.group(1).equals("started") ? childStarted : childStopped).add(m.group(2).trim());
                    if (childStarted.size() == START_ORDER.size() && childStopped.isEmpty()) {
                        // Not Process.destroy(): it closes this side's pipes along with the signal.
                        new ProcessBuilder("kill", "-TERM", Long.toString(child.pid())).inheritIO().start().waitFor();
                    }
                }
            }
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(child.exitValue()).isEqualTo(128 + 15); // ended by the signal, after the hook ran
            assertThat(childStarted).containsExactlyElementsOf(START_ORDER);
            assertThat(childStopped).containsExactlyElementsOf(reversed(START_ORDER));
        } finally {
            child.destroyForcibly();
        }
    }
}
