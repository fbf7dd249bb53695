package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.eventbus.BusSession;
import dev.continuum.router.eventbus.EventBusSupervisor;
import dev.continuum.router.kv.backend.KvCacheIndexSupervisor;
import dev.continuum.router.eventbus.config.EventBusSection;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.kv.backend.config.KvCacheIndexSection;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.testing.TestCertificates;
import dev.continuum.router.testing.SseBackend;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kv-listener as its own OS process ({@code continuum-router kv-listener --config FILE}) between a real SSE
 * backend (a JDK HTTP server) and the router's event bus and {@code kv_cache_index} source in this JVM: relayed
 * events reach the backend KV cache index, and SIGTERM drains the first kv-listener so the stream moves to a
 * second one, resuming after the last applied event ID.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KvListenerEndToEndTest {
    private static final String TOKEN_A = "kv-a-token-0123456789";
    private static final String TOKEN_B = "kv-b-token-0123456789";

    @TempDir
    Path dir;
    private final List<Process> children = new ArrayList<>();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private EventBusSupervisor bus;
    private TestCertificates certs;

    @AfterEach
    void tearDown() throws Exception {
        for (Process child : children) {
            child.destroyForcibly();
        }
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private Process startKvListener(String name, String clientId, String token, SseBackend backend) throws IOException {
        Path tokenFile = Files.writeString(dir.resolve(name + ".token"), token + "\n");
        Path config = Files.writeString(dir.resolve(name + ".yaml"), "bus:\n"
                + "  url: \"https://127.0.0.1:" + bus.listener().localAddress().getPort() + "\"\n"
                + "  client_id: " + clientId + "\n"
                + "  token_file: \"" + tokenFile + "\"\n"
                + "  tls: {ca: \"" + certs.caCert() + "\"}\n"
                + "  drain_timeout: 10s\n"
                + "sources:\n  - {backend: vllm-1, url: \"" + backend.url() + "\"}\n");
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-Xmx128m", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "kv-listener", "--config",
                config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile()).start();
        children.add(child);
        return child;
    }

    private @Nullable BusSession session(String entryId) {
        for (BusSession s : bus.bus().sessions()) {
            if (s.entryId().equals(entryId)) {
                return s;
            }
        }
        return null;
    }

    /** The streams a session carries, -1 without the session (read once: it may end meanwhile). */
    private int streams(String entryId) {
        BusSession s = session(entryId);
        return s == null ? -1 : s.streamCount();
    }

    @Test
    void relaysIntoTheIndexAndSigtermMovesTheStreamToAnotherKvListener() throws Exception {
        certs = TestCertificates.generate(dir.resolve("certs"), List.of("localhost", "127.0.0.1"));
        EventBusSection busSection = new EventBusSection();
        KvCacheIndexSection indexSection = new KvCacheIndexSection();
        LoadResult loaded = ConfigLoader.builder().dynamoSection(busSection).dynamoSection(indexSection).build()
                .loadString("backends: [{name: vllm-1, url: \"http://127.0.0.1:9\"}]\n"
                        + "dynamo:\n  enabled: true\n  event_bus:\n    enabled: true\n    listen: \"127.0.0.1:0\"\n"
                        + "    tls: {cert: \"" + certs.serverCert() + "\", key: \"" + certs.serverKey() + "\"}\n"
                        + "    brokers:\n"
                        + "      - {id: kv-listener-a, role: kv_listener, token_hash: \"" + TokenHash.of(TOKEN_A)
                        + "\", backends: [vllm-1]}\n"
                        + "      - {id: kv-listener-b, role: kv_listener, token_hash: \"" + TokenHash.of(TOKEN_B)
                        + "\", backends: [vllm-1]}\n"
                        + "  kv_cache_index:\n    sources: [{backend: vllm-1, transport: event_bus}]\n");
        assertThat(loaded.errors()).isEmpty();
        // Only the notice that no selection model is listed (the index steers nothing): no bus advisory fires.
        assertThat(loaded.warnings()).singleElement().asString()
                .startsWith("dynamo.kv_cache_index.selection.models:");
        bus = new EventBusSupervisor(new SimpleMeterRegistry());
        bus.reload(true, loaded.orThrow().dynamo().section(busSection));
        bus.start().join();
        closeAfter.add(() -> bus.stop().join());
        KvCacheIndexConfig indexConfig = loaded.orThrow().dynamo().section(indexSection);
        KvCacheIndexSupervisor index = new KvCacheIndexSupervisor(bus.bus(), new SimpleMeterRegistry(), indexConfig);
        index.start().join();
        closeAfter.add(() -> index.stop().join());
        SseBackend backend = new SseBackend();
        closeAfter.add(backend::close);

        Process a = startKvListener("kv-a", "kv-listener-a", TOKEN_A, backend);
        await().atMost(Duration.ofSeconds(60)).until(() -> streams("kv-listener-a") == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[101,102]}");
        await().atMost(Duration.ofSeconds(30)).until(() -> index.index().overlap("vllm-1", new long[] {101, 102}) == 2);

        Process b = startKvListener("kv-b", "kv-listener-b", TOKEN_B, backend);
        await().atMost(Duration.ofSeconds(60)).until(() -> session("kv-listener-b") != null);
        new ProcessBuilder("kill", "-TERM", Long.toString(a.pid())).inheritIO().start().waitFor();
        assertThat(a.waitFor(60, TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(30)).until(() -> session("kv-listener-a") == null
                && streams("kv-listener-b") == 1);
        backend.publish("{\"type\":\"BlockRemoved\",\"block_hashes\":[102]}");
        await().atMost(Duration.ofSeconds(30)).until(() -> index.index().size("vllm-1") == 1);
        assertThat(backend.resumes()).containsExactly("", "1");
        assertThat(Files.readString(dir.resolve("kv-a.log"))).contains("draining");
        assertThat(b.isAlive()).isTrue();
    }
}
