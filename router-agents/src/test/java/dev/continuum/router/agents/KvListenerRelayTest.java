package dev.continuum.router.agents;

import dev.continuum.router.eventbus.SseUpstream;
import dev.continuum.router.eventbus.BusFixture;
import dev.continuum.router.eventbus.BusMetrics;
import dev.continuum.router.eventbus.BusStreamException;
import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.kv.backend.BackendKvIndex;
import dev.continuum.router.kv.backend.KvCacheIndexSupervisor;
import dev.continuum.router.kv.backend.KvEventSource;
import dev.continuum.router.kv.backend.KvSourceMetrics;
import dev.continuum.router.kv.backend.KvSourceView;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.testing.SseBackend;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backend KV cache index fed end to end with real parts: a real SSE backend ({@link SseBackend}, a JDK HTTP
 * server), the real listener over TLS 1.3 + HTTP/2, real kv-listener agents in-process ({@link BrokerAgent} with
 * {@link KvListenerRole}, the code the {@code kv-listener} command runs) and the router's
 * {@link KvCacheIndexSupervisor} over {@link EventBus#openAnnouncedStream} or a direct dial. Relayed events
 * update the index; a dropped stream resumes after its last event ID with nothing lost or doubled; a draining
 * kv-listener hands the stream to another; a backend outside the grant is refused.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KvListenerRelayTest {
    static final String TOKEN_KV_B = "token-kv-b-0123456789";
    private BusFixture fixture;
    private final EventBus bus = new EventBus(Duration.ofSeconds(5));
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private SseBackend backend;
    private SimpleMeterRegistry meters;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        fixture = BusFixture.attached(dir, "      - {id: kv-listener-b, role: kv_listener, token_hash: \""
                + TokenHash.of(TOKEN_KV_B) + "\", backends: [vllm-1]}\n", bus);
    }

    @AfterEach
    void closeEach() throws Exception {
        fixture.closeAll(closeAfter);
    }

    @AfterAll
    void stop() {
        fixture.close();
    }

    private SseBackend backend() throws Exception {
        SseBackend b = new SseBackend();
        closeAfter.add(b);
        return b;
    }

    private BrokerAgent listener(String token, String clientId, Map<String, URI> sources, boolean awaitWelcome) {
        return AgentFixture.agent(fixture, token, clientId, List.of(), settings -> new KvListenerRole(sources), awaitWelcome,
                closeAfter);
    }

    private KvCacheIndexSupervisor index(KvCacheIndexConfig.Source source) {
        meters = new SimpleMeterRegistry();
        KvCacheIndexSupervisor supervisor = new KvCacheIndexSupervisor(bus, meters,
                new KvCacheIndexConfig(List.of(source), 1000, 4096));
        supervisor.start().join();
        closeAfter.add(() -> supervisor.stop().orTimeout(10, TimeUnit.SECONDS).join());
        return supervisor;
    }

    private double events(String result) {
        return meters.get("continuum.kv.cache.index.events").tag("result", result).counter().count();
    }

    private static KvEventSource only(KvCacheIndexSupervisor s) {
        return s.sources().get(0);
    }

    @Test
    void relayedEventsUpdateTheIndexAndADroppedStreamResumesAfterItsLastEventId() throws Exception {
        backend = backend();
        KvCacheIndexSupervisor supervisor = index(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.EVENT_BUS, null));
        await().atMost(Duration.ofSeconds(10)).until(() -> only(supervisor).state() == KvSourceMetrics.State.PENDING);

        listener(BusFixture.TOKEN_KV, "kv-listener-a", Map.of("vllm-1", backend.url()), true);
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[11,12,13],\"parent_block_hash\":null}");
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[18446744073709551615]}");
        BackendKvIndex index = supervisor.index();
        await().atMost(Duration.ofSeconds(10)).until(() -> index.overlap("vllm-1", new long[] {11, 12, 13, 99}) == 3
                && index.overlap("vllm-1", new long[] {-1L}) == 1);
        assertThat(backend.resumes()).containsExactly("");

        // The backend's stream drops; events published meanwhile arrive after the resume, once each.
        backend.dropAll();
        backend.publish("{\"type\":\"BlockRemoved\",\"block_hashes\":[11]}");
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[14]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> index.size("vllm-1") == 4
                && index.overlap("vllm-1", new long[] {14}) == 1 && index.overlap("vllm-1", new long[] {11}) == 0);
        assertThat(backend.resumes()).containsExactly("", "2");
        assertThat(only(supervisor).lastEventId()).isEqualTo(4L);
        assertThat(events("applied")).isEqualTo(4.0);
        assertThat(events("duplicate")).isZero();

        // A backend that replays from the start: the router skips what it already applied.
        backend.honorResume(false);
        backend.dropAll();
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[15]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> index.overlap("vllm-1", new long[] {15}) == 1);
        assertThat(backend.resumes()).containsExactly("", "2", "4");
        assertThat(events("duplicate")).isEqualTo(4.0);
        assertThat(events("applied")).isEqualTo(5.0);
        assertThat(index.overlap("vllm-1", new long[] {11})).isZero(); // its removal was not undone by the replay
    }

    /** The admin rows' keys, in the order docs/admin-api.md lists them. */
    static final List<String> ROW_KEYS = List.of("backend", "transport", "state", "kv_listener", "client_id",
            "last_event_id", "blocks", "last_event_at", "last_error", "last_error_at", "failures", "block_size");

    @Test
    void theAdminRowsFollowEachSourceThroughConnectAndDisconnect() throws Exception {
        backend = backend();
        SseBackend direct = backend();
        java.time.Instant now = java.time.Instant.parse("2026-12-03T12:00:00Z");
        meters = new SimpleMeterRegistry();
        KvCacheIndexSupervisor supervisor = new KvCacheIndexSupervisor(bus, meters, new KvCacheIndexConfig(List.of(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.EVENT_BUS, null),
                new KvCacheIndexConfig.Source("vllm-2", KvCacheIndexConfig.Transport.DIRECT, direct.url())),
                1000, 4096), java.time.Clock.fixed(now, java.time.ZoneOffset.UTC));
        supervisor.start().join();
        closeAfter.add(() -> supervisor.stop().orTimeout(10, TimeUnit.SECONDS).join());

        // In configuration order; the bus source waits for a kv-listener, the direct one connects.
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.views().get(0).state().equals("pending")
                && supervisor.views().get(1).state().equals("connected"));
        Map<String, Object> pending = supervisor.adminView().get(0);
        assertThat(pending.keySet()).containsExactlyElementsOf(ROW_KEYS);
        assertThat(pending).containsEntry("backend", "vllm-1").containsEntry("transport", "event_bus")
                .containsEntry("kv_listener", null).containsEntry("last_event_id", null).containsEntry("blocks", 0)
                .containsEntry("last_event_at", null).containsEntry("last_error", null)
                .containsEntry("failures", Map.of("tls", 0L, "connect", 0L, "http", 0L, "event_bus", 0L));

        BrokerAgent agent = listener(BusFixture.TOKEN_KV, "kv-listener-a", Map.of("vllm-1", backend.url()), true);
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1,2,3]}");
        direct.publish("{\"type\":\"BlockStored\",\"block_hashes\":[4]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.views().get(0).blocks() == 3
                && supervisor.views().get(1).blocks() == 1);
        Map<String, Object> relayed = supervisor.adminView().get(0);
        assertThat(relayed).containsEntry("state", "connected").containsEntry("kv_listener", "kv-listener-a")
                .containsEntry("client_id", "kv-listener-a").containsEntry("last_event_id", "1")
                .containsEntry("last_event_at", "2026-12-03T12:00:00Z");
        assertThat(supervisor.adminView().get(1)).containsEntry("transport", "direct")
                .containsEntry("kv_listener", null).containsEntry("client_id", null);

        // The kv-listener dies without a word: the row loses its carrier, says why, and keeps the blocks.
        agent.abort();
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.views().get(0).state().equals("pending"));
        KvSourceView lost = supervisor.views().get(0);
        assertThat(lost.kvListener()).isNull();
        assertThat(lost.clientId()).isNull();
        assertThat(lost.lastError()).isEqualTo("event_bus: the kv-listener drained or went away");
        assertThat(lost.lastErrorAt()).isEqualTo(now);
        assertThat(lost.blocks()).isEqualTo(3);
        assertThat(lost.lastEventId()).isEqualTo(1L);

        // The direct backend goes away: its stream ends, then reconnects are refused and counted.
        direct.close();
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.views().get(1).failures().get("connect") >= 1);
        KvSourceView refused = supervisor.views().get(1);
        assertThat(refused.state()).isIn("backoff", "connecting");
        assertThat(refused.lastError()).isEqualTo("connect: refused");
        assertThat(refused.blocks()).isEqualTo(1);
    }

    @Test
    void aDirectSourceNamesAResponseHeaderPastTheBoundAsSuch() throws Exception {
        // A raw backend: every connection gets a 200 event-stream head whose header outgrows the codec's bound.
        ServerSocket raw = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        closeAfter.add(raw);
        Thread serve = new Thread(() -> {
            while (!raw.isClosed()) {
                try (Socket s = raw.accept()) {
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nx-pad: "
                            + "a".repeat(SseUpstream.MAX_HEADER_BYTES + 1024) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().read(); // until the router closes
                } catch (IOException e) {
                    // the router closed, or the test ended
                }
            }
        }, "oversized-header-backend");
        serve.setDaemon(true);
        serve.start();
        KvCacheIndexSupervisor supervisor = index(new KvCacheIndexConfig.Source("vllm-1",
                KvCacheIndexConfig.Transport.DIRECT, URI.create("http://127.0.0.1:" + raw.getLocalPort() + "/events")));
        await().atMost(Duration.ofSeconds(10)).until(() -> only(supervisor).view().failures().get("http") >= 1);
        assertThat(only(supervisor).view().lastError()).isEqualTo("http: response header too large");
    }

    @Test
    void aDirectSourceShowsABackendThatAnswersSomethingElseThanAnEventStream() throws Exception {
        backend = backend();
        backend.status(503);
        KvCacheIndexSupervisor supervisor = index(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.DIRECT, backend.url()));
        await().atMost(Duration.ofSeconds(10)).until(() -> only(supervisor).view().failures().get("http") >= 1);
        assertThat(only(supervisor).view().lastError()).isEqualTo("http: answered 503, not text/event-stream");
        assertThat(supervisor.index().size("vllm-1")).isZero();
        // Once it serves the stream, the source reads it.
        backend.status(200);
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 1);
        assertThat(only(supervisor).view().state()).isEqualTo("connected");
    }

    @Test
    void aDrainingKvListenerHandsTheStreamToAnother() throws Exception {
        backend = backend();
        KvCacheIndexSupervisor supervisor = index(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.EVENT_BUS, null));
        BrokerAgent a = listener(BusFixture.TOKEN_KV, "kv-listener-a", Map.of("vllm-1", backend.url()), true);
        await().atMost(Duration.ofSeconds(10)).until(() -> a.relayCount() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1,2]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 2);

        BrokerAgent b = listener(TOKEN_KV_B, "kv-listener-b", Map.of("vllm-1", backend.url()), true);
        assertThat(b.relayCount()).isZero(); // an open stream never moves on its own
        a.drain("rolling restart", Duration.ofSeconds(10));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.relayCount() == 1 && a.relayCount() == 0);
        backend.publish("{\"type\":\"AllBlocksCleared\"}");
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[3]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 1
                && supervisor.index().overlap("vllm-1", new long[] {3}) == 1);
        assertThat(backend.resumes()).containsExactly("", "1");
        assertThat(events("duplicate")).isZero();
    }

    @Test
    void aBackendOutsideTheGrantIsRefused() throws Exception {
        backend = backend();
        double forbidden = fixture.meters.get(BusMetrics.REFUSALS).tag("code", "forbidden").counter().count();
        Map<String, URI> sources = new LinkedHashMap<>();
        sources.put("vllm-1", backend.url());
        sources.put("vllm-2", backend.url()); // kv-listener-a is granted vllm-1 only
        BrokerAgent agent = listener(BusFixture.TOKEN_KV, "kv-listener-a", sources, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.meters.get(BusMetrics.REFUSALS)
                .tag("code", "forbidden").counter().count() > forbidden);
        assertThat(agent.sessionId()).isNull();
        assertThat(bus.openAnnouncedStream("vllm-2", null)).failsWithin(Duration.ofSeconds(5))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOfSatisfying(BusStreamException.class,
                        e -> assertThat(e.reason()).isEqualTo(BusStreamException.Reason.NO_SESSION));
    }

    @Test
    void aDirectSourceReadsTheBackendItselfAndResumes() throws Exception {
        backend = backend();
        KvCacheIndexSupervisor supervisor = index(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.DIRECT, backend.url()));
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[7,8]}");
        backend.publish("not json");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 2);
        backend.dropAll();
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[9]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 3);
        assertThat(backend.resumes()).containsExactly("", "2");
        assertThat(events("malformed")).isEqualTo(1.0);
        assertThat(events("applied")).isEqualTo(2.0);
    }
}
