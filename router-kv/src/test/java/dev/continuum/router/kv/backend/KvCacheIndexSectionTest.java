package dev.continuum.router.kv.backend;

import dev.continuum.router.eventbus.config.EventBusSection;
import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;
import dev.continuum.router.kv.backend.config.KvCacheIndexSection;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ConfigRenderer;
import dev.continuum.router.testing.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code dynamo.kv_cache_index}: binding, errors with their field paths, and the three bus advisories. */
class KvCacheIndexSectionTest {
    private static final KvCacheIndexSection SECTION = new KvCacheIndexSection();
    private static final String HASH = "sha256:" + "a".repeat(64);

    private static LoadResult load(String yaml) {
        return ConfigLoader.builder().dynamoSection(new EventBusSection()).dynamoSection(SECTION).build()
                .loadString("backends: [{name: vllm-1, url: \"http://127.0.0.1:8000\"},"
                        + " {name: vllm-2, url: \"http://127.0.0.1:8001\"}]\n" + yaml);
    }

    private static List<String> paths(List<Problem> problems) {
        return problems.stream().map(Problem::path).toList();
    }

    @Test
    void bindsDirectAndBusSources() {
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, url: "http://vllm-1:8000/kv/events"}
                      - {backend: vllm-2, transport: event_bus}
                    max_event_bytes: 8KiB
                  event_bus:
                    enabled: true
                    tls: {cert: /dev/null, key: /dev/null}
                    brokers: [{id: kv-a, role: kv_listener, token_hash: "%s", backends: [vllm-2]}]
                """.formatted(HASH));
        KvCacheIndexConfig c = r.orThrow().dynamo().section(SECTION);
        assertThat(c.sources()).containsExactly(
                new KvCacheIndexConfig.Source("vllm-1", KvCacheIndexConfig.Transport.DIRECT,
                        java.net.URI.create("http://vllm-1:8000/kv/events")),
                new KvCacheIndexConfig.Source("vllm-2", KvCacheIndexConfig.Transport.EVENT_BUS, null));
        assertThat(c.maxEventBytes()).isEqualTo(8192);
        assertThat(paths(r.warnings())).doesNotContain("dynamo.kv_cache_index.sources[1].transport",
                "dynamo.kv_cache_index.sources[1].backend");
        // Sources without a selection model steer nothing yet: the load says which key would change that.
        assertThat(paths(r.warnings())).contains("dynamo.kv_cache_index.selection.models")
                .doesNotContain("dynamo.kv_cache_index.sources");
    }

    @Test
    void reportsEachBadFieldByItsPath() {
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, transport: direct}
                      - {backend: vllm-2, transport: zmq}
                      - {backend: vllm-1, transport: event_bus}
                      - {backend: vllm-9, transport: event_bus, url: "http://x:1/"}
                      - {backend: vllm-3, url: "ftp://x:1/"}
                    max_event_bytes: 10
                """);
        assertThat(paths(r.errors())).contains("dynamo.kv_cache_index.sources[0].url",
                "dynamo.kv_cache_index.sources[1].endpoint", "dynamo.kv_cache_index.sources[2].backend",
                "dynamo.kv_cache_index.sources[3].url", "dynamo.kv_cache_index.sources[4].url",
                "dynamo.kv_cache_index.max_event_bytes");
    }

    @Test
    void bindsAnEngineZmqSourceAndReadsItBackAsWritten() {
        LoadResult r = load("""
                dynamo:
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, transport: zmq, endpoint: "tcp://vllm-1:5557",
                         replay_endpoint: "tcp://vllm-1:5558", topic: kv}
                      - {backend: vllm-2, transport: zmq, endpoint: "tcp://[fd00::7]:5557"}
                """);
        assertThat(r.errors()).isEmpty();
        KvCacheIndexConfig c = r.orThrow().dynamo().section(SECTION);
        assertThat(c.sources()).containsExactly(
                KvCacheIndexConfig.Source.zmq("vllm-1",
                        new KvCacheIndexConfig.Zmq("tcp://vllm-1:5557", "tcp://vllm-1:5558", "kv")),
                KvCacheIndexConfig.Source.zmq("vllm-2", new KvCacheIndexConfig.Zmq("tcp://[fd00::7]:5557", null, "")));
        assertThat(c.sources().get(0).zmq().replay().port()).isEqualTo(5558);
        assertThat(paths(r.warnings())).contains("dynamo.kv_cache_index.selection.models");
        String readback = ConfigRenderer.get().yaml(r.orThrow());
        LoadResult again = ConfigLoader.builder().dynamoSection(new EventBusSection()).dynamoSection(SECTION).build()
                .loadString(readback);
        assertThat(again.orThrow().dynamo().section(SECTION)).isEqualTo(c);
    }

    @Test
    void reportsEachBadEngineSourceFieldByItsPath() {
        LoadResult r = load("""
                dynamo:
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, transport: zmq, endpoint: "http://vllm-1:5557"}
                      - {backend: vllm-2, transport: zmq, endpoint: "tcp://vllm-2:5557", replay_endpoint: "tcp://x"}
                      - {backend: vllm-3, transport: zmq, endpoint: "tcp://a:1", url: "http://a:1/"}
                      - {backend: vllm-4, transport: zmq, endpoint: "tcp://a:1", topic: "%s"}
                      - {backend: vllm-5, url: "http://a:1/", endpoint: "tcp://a:1"}
                      - {backend: vllm-6, transport: event_bus, replay_endpoint: "tcp://a:1"}
                """.formatted("t".repeat(129)));
        assertThat(paths(r.errors())).contains("dynamo.kv_cache_index.sources[0].endpoint",
                "dynamo.kv_cache_index.sources[1].replay_endpoint", "dynamo.kv_cache_index.sources[2].url",
                "dynamo.kv_cache_index.sources[3].topic", "dynamo.kv_cache_index.sources[4].endpoint",
                "dynamo.kv_cache_index.sources[5].replay_endpoint");
    }

    @Test
    void anHttpsSourceBindsItsCaBundleAndReadsBackAsWritten(@TempDir Path dir) throws Exception {
        TestCertificates certs = TestCertificates.generate(dir, List.of("vllm-1"));
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, url: "https://vllm-1:8443/kv/events", tls: {ca_cert: "%s"}}
                      - {backend: vllm-2, url: "https://vllm-2/kv/events"}
                """.formatted(certs.caCert()));
        assertThat(r.errors()).isEmpty();
        KvCacheIndexConfig c = r.orThrow().dynamo().section(SECTION);
        KvCacheIndexConfig.Tls tls = c.sources().get(0).tls();
        assertThat(tls).isNotNull();
        assertThat(tls.caCert().trusted()).singleElement().satisfies(cert ->
                assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=continuum-test-ca"));
        assertThat(c.sources().get(1).tls()).isNull(); // the JDK's trust store
        // The readback shows the file, and loads back to an equal config.
        Map<String, Object> tree = ConfigRenderer.get().tree(r.orThrow());
        assertThat(tree.toString()).contains("tls={ca_cert=" + certs.caCert() + "}");
        String readback = ConfigRenderer.get().yaml(r.orThrow());
        LoadResult again = ConfigLoader.builder().dynamoSection(new EventBusSection()).dynamoSection(SECTION).build()
                .loadString(readback);
        assertThat(again.orThrow().dynamo().section(SECTION)).isEqualTo(c);
    }

    @Test
    void aSourceIsEqualAcrossReloadsUntilItsCaCertificatesChange(@TempDir Path dir) throws Exception {
        Path ca = dir.resolve("ca.pem");
        Files.copy(TestCertificates.generate(dir.resolve("one"), List.of("a")).caCert(), ca);
        String yaml = """
                dynamo:
                  kv_cache_index:
                    sources: [{backend: vllm-1, url: "https://vllm-1/kv/events", tls: {ca_cert: "%s"}}]
                """.formatted(ca);
        KvCacheIndexConfig.Source first = load(yaml).orThrow().dynamo().section(SECTION).sources().get(0);
        assertThat(load(yaml).orThrow().dynamo().section(SECTION).sources().get(0)).isEqualTo(first);
        // The supervisor restarts a source whose entry is no longer equal: a new CA in the same file is one.
        Files.copy(TestCertificates.generate(dir.resolve("two"), List.of("a")).caCert(), ca,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(load(yaml).orThrow().dynamo().section(SECTION).sources().get(0)).isNotEqualTo(first);
    }

    @Test
    void aTlsBlockOutsideHttpsAndAnUnusableCaAreErrorsAtTheirPaths(@TempDir Path dir) throws Exception {
        Path notPem = Files.writeString(dir.resolve("not.pem"), "-----BEGIN CERTIFICATE-----\nnope\n");
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, url: "http://vllm-1:8000/kv/events", tls: {ca_cert: "%s"}}
                      - {backend: vllm-2, transport: event_bus, tls: {ca_cert: "%s"}}
                """.formatted(notPem, notPem));
        assertThat(paths(r.errors())).containsExactly("dynamo.kv_cache_index.sources[0].tls",
                "dynamo.kv_cache_index.sources[1].tls");
        LoadResult bad = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, url: "https://vllm-1/kv/events", tls: {ca_cert: "%s"}}
                      - {backend: vllm-2, url: "https://vllm-2/kv/events", tls: {ca_cert: "%s"}}
                """.formatted(notPem, dir.resolve("missing.pem")));
        assertThat(paths(bad.errors())).containsExactly("dynamo.kv_cache_index.sources[0].tls.ca_cert",
                "dynamo.kv_cache_index.sources[1].tls.ca_cert");
        assertThat(bad.errors().get(0).toString()).contains("not a PEM bundle of X.509 certificates");
        assertThat(bad.errors().get(1).toString()).contains("cannot be read");
    }

    @Test
    void anUnknownBackendIsAnError() {
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources: [{backend: nope, url: "http://x:1/"}]
                """);
        assertThat(paths(r.errors())).containsExactly("dynamo.kv_cache_index.sources[0].backend");
    }

    @Test
    void aBusSourceWithoutTheBusWarns() {
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources: [{backend: vllm-1, transport: event_bus}]
                """);
        assertThat(r.errors()).isEmpty();
        assertThat(paths(r.warnings())).contains("dynamo.kv_cache_index.sources[0].transport");
    }

    @Test
    void anUngrantedBusSourceAndAnUnusedGrantWarn() {
        LoadResult r = load("""
                dynamo:
                  enabled: true
                  kv_cache_index:
                    sources: [{backend: vllm-1, transport: event_bus}]
                  event_bus:
                    enabled: true
                    tls: {cert: /dev/null, key: /dev/null}
                    brokers: [{id: kv-a, role: kv_listener, token_hash: "%s", backends: [vllm-2]}]
                """.formatted(HASH));
        assertThat(paths(r.warnings())).contains("dynamo.kv_cache_index.sources[0].backend",
                "dynamo.event_bus.brokers[0].backends[0]");
    }

    @Test
    void bindsSelectionModelsReadsThemBackAndWarnsWhatWouldSteerNothing() {
        String tok = "blake3:" + "a".repeat(64);
        String cfg = "blake3:" + "b".repeat(64);
        LoadResult r = load("""
                dynamo:
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, transport: zmq, endpoint: "tcp://vllm-1:5557"}
                    selection:
                      models:
                        - model: qwen
                          tokenizer: {path: /models/qwen/tokenizer.json, blake3: "%s"}
                          tokenizer_config: {path: /models/qwen/tokenizer_config.json, blake3: "%s"}
                          block_size: 32
                        - model: elsewhere
                          tokenizer: {path: /models/other/tokenizer.json, blake3: "%s"}
                """.formatted(tok, cfg, tok));
        assertThat(r.errors()).isEmpty();
        KvCacheIndexConfig c = r.orThrow().dynamo().section(SECTION);
        assertThat(c.selection().enabled()).isTrue();
        assertThat(c.selection().model("qwen")).isEqualTo(new dev.continuum.router.kv.backend.config
                .BackendSelectionConfig.Model("qwen", new dev.continuum.router.kv.backend.config.BackendSelectionConfig
                .Artifact("/models/qwen/tokenizer.json", tok), new dev.continuum.router.kv.backend.config
                .BackendSelectionConfig.Artifact("/models/qwen/tokenizer_config.json", cfg), 32));
        assertThat(c.selection().model("elsewhere").blockSize()).isEqualTo(16);
        // Nothing is pinned in dynamo.kv: each unpinned file is named (its model would be picked by the strategy).
        assertThat(paths(r.warnings())).contains("dynamo.kv_cache_index.selection.models[0].tokenizer.blake3",
                "dynamo.kv_cache_index.selection.models[0].tokenizer_config.blake3",
                "dynamo.kv_cache_index.selection.models[1].tokenizer.blake3");
        String readback = ConfigRenderer.get().yaml(r.orThrow());
        LoadResult again = ConfigLoader.builder().dynamoSection(new EventBusSection()).dynamoSection(SECTION).build()
                .loadString(readback);
        assertThat(again.orThrow().dynamo().section(SECTION)).isEqualTo(c);
    }

    @Test
    void reportsEachBadSelectionFieldByItsPath() {
        LoadResult r = load("""
                dynamo:
                  kv_cache_index:
                    selection:
                      enabled: maybe
                      models:
                        - model: a
                          tokenizer: {path: /t.json, blake3: "blake3:XYZ"}
                        - model: a
                          tokenizer: {path: /t.json, blake3: "blake3:%s"}
                        - {model: c}
                        - model: d
                          tokenizer: {blake3: "blake3:%s"}
                          block_size: 8
                """.formatted("c".repeat(64), "c".repeat(64)));
        assertThat(paths(r.errors())).contains("dynamo.kv_cache_index.selection.enabled",
                "dynamo.kv_cache_index.selection.models[0].tokenizer.blake3",
                "dynamo.kv_cache_index.selection.models[1].model",
                "dynamo.kv_cache_index.selection.models[2].tokenizer",
                "dynamo.kv_cache_index.selection.models[3].tokenizer.path",
                "dynamo.kv_cache_index.selection.models[3].block_size");
    }
}
