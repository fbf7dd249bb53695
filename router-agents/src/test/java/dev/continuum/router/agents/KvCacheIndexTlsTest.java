package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BusFixture;
import dev.continuum.router.eventbus.BusSession;
import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.kv.backend.KvCacheIndexSupervisor;
import dev.continuum.router.kv.backend.KvSourceView;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.config.BackendTrust;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.testing.SseBackend;
import dev.continuum.router.testing.TestCertificates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * {@code https} KV-event streams against a real TLS server (the JDK's, {@link SseBackend} with a certificate from
 * a CA generated here), read by the router directly and relayed by a real kv-listener over the real bus: a
 * trusted CA works (TLS 1.3, and 1.2 against a server that speaks only that) and resumes after a drop; a
 * certificate from another CA and one that does not name the host are refused before any HTTP request reaches
 * the backend, counted ({@code failures.tls}) and shown with their reason in the source's admin row, and leave
 * no stream or relay behind.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class KvCacheIndexTlsTest {
    private BusFixture fixture;
    private final EventBus bus = new EventBus(Duration.ofSeconds(5));
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    /** The backend's certificate: 127.0.0.1 and localhost, from CA "trusted". */
    private TestCertificates trusted;
    /** Another CA's certificate for the same names. */
    private TestCertificates stranger;
    /** From CA "trusted", for localhost only: dialling 127.0.0.1 does not match it. */
    private TestCertificates localhostOnly;
    private BackendTrust trust;
    private SimpleMeterRegistry meters;
    private KvCacheIndexSupervisor supervisor;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        fixture = BusFixture.attached(dir, "", bus);
        trusted = TestCertificates.generate(dir.resolve("backend"), List.of("127.0.0.1", "localhost"));
        stranger = TestCertificates.generate(dir.resolve("stranger"), List.of("127.0.0.1", "localhost"));
        localhostOnly = TestCertificates.generate(dir.resolve("localhost-only"), List.of("localhost"));
        // One bundle holding both CAs the test trusts ("trusted" and the localhost-only one's).
        Path bundle = dir.resolve("bundle.pem");
        java.nio.file.Files.writeString(bundle, java.nio.file.Files.readString(trusted.caCert())
                + java.nio.file.Files.readString(localhostOnly.caCert()));
        trust = BackendTrust.load(bundle);
    }

    @AfterEach
    void closeEach() throws Exception {
        fixture.closeAll(closeAfter);
    }

    @AfterAll
    void stop() {
        fixture.close();
    }

    private SseBackend backend(TestCertificates certs) throws Exception {
        SseBackend b = new SseBackend(certs);
        closeAfter.add(b);
        return b;
    }

    private KvCacheIndexSupervisor index(KvCacheIndexConfig.Source source) {
        meters = new SimpleMeterRegistry();
        KvCacheIndexSupervisor supervisor = new KvCacheIndexSupervisor(bus, meters,
                new KvCacheIndexConfig(List.of(source), 1000, 4096));
        supervisor.start().join();
        closeAfter.add(() -> supervisor.stop().orTimeout(10, TimeUnit.SECONDS).join());
        this.supervisor = supervisor;
        return supervisor;
    }

    private BrokerAgent kvListener(URI url, Map<String, BackendTrust> trustFor) {
        return AgentFixture.agent(fixture, BusFixture.TOKEN_KV, "kv-listener-a", List.of(),
                settings -> new KvListenerRole(Map.of("vllm-1", url), trustFor), true, closeAfter);
    }

    /** TLS failures as the source's admin row and as the metric count them: the lesser, to wait for both. */
    private long tlsFailures() {
        return Math.min(supervisor.views().get(0).failures().get("tls"), tlsFailureMeter());
    }

    /** TLS failures counted anywhere: the greater of the admin row and the metric. */
    private long anyTlsFailures() {
        return Math.max(supervisor.views().get(0).failures().get("tls"), tlsFailureMeter());
    }

    private long tlsFailureMeter() {
        return (long) meters.get("continuum.kv.cache.index.stream.failures").tag("reason", "tls").counter().count();
    }

    private static KvSourceView row(KvCacheIndexSupervisor s) {
        return s.views().get(0);
    }

    private static KvCacheIndexConfig.Source direct(URI url, BackendTrust ca) {
        return new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.DIRECT, url,
                new KvCacheIndexConfig.Tls(ca));
    }

    private static KvCacheIndexConfig.Source relayed() {
        return new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.EVENT_BUS, null);
    }

    @Test
    void aDirectSourceTrustingTheCaReadsAndResumesOverTls() throws Exception {
        SseBackend backend = backend(trusted);
        KvCacheIndexSupervisor supervisor = index(direct(backend.url(), trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1,2]}");
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[3]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 3);
        backend.dropAll();
        backend.publish("{\"type\":\"BlockRemoved\",\"block_hashes\":[1]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 2);
        assertThat(backend.resumes()).containsExactly("", "2");
        assertThat(row(supervisor).lastEventId()).isEqualTo(3L);
        assertThat(anyTlsFailures()).isZero();
    }

    @Test
    void aBackendThatSpeaksOnlyTls12IsReadToo() throws Exception {
        SseBackend backend = new SseBackend(trusted, new String[] {"TLSv1.2"});
        closeAfter.add(backend);
        KvCacheIndexSupervisor supervisor = index(direct(backend.url(), trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 1);
        assertThat(anyTlsFailures()).isZero();
    }

    @Test
    void aDirectSourceRefusesACertificateFromAnotherCa() throws Exception {
        SseBackend backend = backend(stranger);
        KvCacheIndexSupervisor supervisor = index(direct(backend.url(), trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> tlsFailures() >= 1);
        KvSourceView row = row(supervisor);
        assertThat(row.lastError()).isEqualTo("tls: certificate not trusted");
        assertThat(row.state()).isIn("backoff", "connecting");
        assertThat(backend.resumes()).isEmpty(); // no request went out over the unverified connection
        assertThat(backend.openStreams()).isZero();
        assertThat(supervisor.index().size("vllm-1")).isZero();
    }

    @Test
    void aDirectSourceRefusesACertificateThatDoesNotNameTheHost() throws Exception {
        SseBackend backend = backend(localhostOnly);
        KvCacheIndexSupervisor supervisor = index(direct(backend.url("127.0.0.1"), trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> tlsFailures() >= 1);
        assertThat(row(supervisor).lastError()).isEqualTo("tls: certificate does not match the host");
        assertThat(backend.resumes()).isEmpty();
        // The same certificate by the name it carries is accepted.
        SseBackend named = backend(localhostOnly);
        KvCacheIndexSupervisor ok = index(direct(named.url("localhost"), trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> named.openStreams() == 1);
        named.publish("{\"type\":\"BlockStored\",\"block_hashes\":[5]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> ok.index().size("vllm-1") == 1);
    }

    @Test
    void aKvListenerRelaysAnHttpsStreamAndResumes() throws Exception {
        SseBackend backend = backend(trusted);
        KvCacheIndexSupervisor supervisor = index(relayed());
        BrokerAgent agent = kvListener(backend.url(), Map.of("vllm-1", trust));
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[7,8]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 2);
        backend.dropAll();
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[9]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 3);
        assertThat(backend.resumes()).containsExactly("", "1");
        assertThat(agent.relayCount()).isEqualTo(1);
        assertThat(row(supervisor).kvListener()).isEqualTo("kv-listener-a");
    }

    @Test
    void aKvListenerRefusesAnUntrustedBackendAndTheRouterSaysWhy() throws Exception {
        SseBackend backend = backend(stranger);
        KvCacheIndexSupervisor supervisor = index(relayed());
        BrokerAgent agent = kvListener(backend.url(), Map.of("vllm-1", trust));
        await().atMost(Duration.ofSeconds(15)).until(() -> tlsFailures() >= 1);
        assertThat(row(supervisor).lastError()).isEqualTo("tls: refused by the kv-listener (target_tls_failed)");
        assertThat(backend.resumes()).isEmpty();
        // Nothing is left open on either side between attempts.
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.relayCount() == 0 && streamsOf("kv-listener-a") == 0);
        assertThat(supervisor.index().size("vllm-1")).isZero();
    }

    @Test
    void aKvListenerRefusesACertificateThatDoesNotNameTheHost() throws Exception {
        SseBackend backend = backend(localhostOnly);
        KvCacheIndexSupervisor supervisor = index(relayed());
        BrokerAgent agent = kvListener(backend.url("127.0.0.1"), Map.of("vllm-1", trust));
        await().atMost(Duration.ofSeconds(15)).until(() -> tlsFailures() >= 1);
        assertThat(row(supervisor).lastError()).isEqualTo("tls: refused by the kv-listener (target_tls_failed)");
        assertThat(backend.resumes()).isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> agent.relayCount() == 0 && streamsOf("kv-listener-a") == 0);
    }

    @Test
    void aKvListenerWithoutACaBundleUsesTheJdkTrustStoreAndRefusesATestCa() throws Exception {
        SseBackend backend = backend(trusted);
        KvCacheIndexSupervisor supervisor = index(relayed());
        kvListener(backend.url(), Map.of());
        await().atMost(Duration.ofSeconds(15)).until(() -> tlsFailures() >= 1);
        assertThat(backend.resumes()).isEmpty();
        assertThat(supervisor.index().size("vllm-1")).isZero();
    }

    @Test
    void theKvListenerProcessReadsItsFilesTlsCaAndRelaysTheHttpsStream(@TempDir Path dir) throws Exception {
        SseBackend backend = backend(trusted);
        KvCacheIndexSupervisor supervisor = index(relayed());
        Path token = java.nio.file.Files.writeString(dir.resolve("token"), BusFixture.TOKEN_KV + "\n");
        Path file = java.nio.file.Files.writeString(dir.resolve("kv-listener.yaml"), "bus:\n"
                + "  url: \"https://127.0.0.1:" + fixture.listener.localAddress().getPort() + "\"\n"
                + "  client_id: kv-listener-a\n  token_file: \"" + token + "\"\n"
                + "  tls: {ca: \"" + fixture.certs.caCert() + "\"}\n"
                + "sources:\n  - {backend: vllm-1, url: \"" + backend.url() + "\", tls: {ca: \"" + trusted.caCert()
                + "\"}}\n");
        KvListenerConfig.Result loaded = KvListenerConfig.load(file, Map.of());
        assertThat(loaded.problems()).isEmpty();
        KvListenerProcess process = KvListenerProcess.start(java.util.Objects.requireNonNull(loaded.config()));
        closeAfter.add(process::close);
        await().atMost(Duration.ofSeconds(10)).until(() -> backend.openStreams() == 1);
        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[21,22]}");
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.index().size("vllm-1") == 2);
        assertThat(anyTlsFailures()).isZero();
    }

    private int streamsOf(String entryId) {
        for (BusSession s : bus.sessions()) {
            if (s.entryId().equals(entryId)) {
                return s.streamCount();
            }
        }
        return 0;
    }
}
