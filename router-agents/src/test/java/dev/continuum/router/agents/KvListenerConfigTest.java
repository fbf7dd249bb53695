package dev.continuum.router.agents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.continuum.router.testing.TestCertificates;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kv-listener's file: what it binds, and each problem by its field path, the token never echoed. */
class KvListenerConfigTest {
    @TempDir
    Path dir;

    private KvListenerConfig.Result load(String sources) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "secret-token-123\n");
        Path file = dir.resolve("kv-listener.yaml");
        Files.writeString(file, "bus:\n  url: https://router.example:7443\n  client_id: kv-listener-a\n"
                + "  token_file: " + token + "\n" + sources);
        return KvListenerConfig.load(file, Map.of());
    }

    @Test
    void aFileNestedTenThousandLevelsDeepIsAnErrorWithItsPathAndLine() throws Exception {
        KvListenerConfig.Result r = load("sources:\n  - " + "- ".repeat(10_000) + "x\n");
        assertThat(r.config()).isNull();
        assertThat(r.problems()).singleElement().satisfies(p -> {
            assertThat(p.severity()).isEqualTo(Problem.Severity.ERROR);
            assertThat(p.path()).isEqualTo("sources" + "[0]".repeat(127));
            assertThat(p.message()).startsWith("nested deeper than 128 levels at " + dir.resolve("kv-listener.yaml")
                    + ":6:");
        });
    }

    @Test
    void bindsTheBusAndTheSourcesInOrder() throws Exception {
        KvListenerConfig.Result r = load("sources:\n  - {backend: vllm-2, url: \"http://vllm-2:8000/kv/events\"}\n"
                + "  - {backend: vllm-1, url: \"http://vllm-1:8000/kv/events?x=1\"}\n");
        assertThat(r.problems()).isEmpty();
        KvListenerConfig c = r.config();
        assertThat(c).isNotNull();
        assertThat(c.sources().keySet()).containsExactly("vllm-2", "vllm-1");
        assertThat(c.agent().token()).isEqualTo("secret-token-123");
        assertThat(c.agent().port()).isEqualTo(7443);
    }

    @Test
    void bindsAnHttpsSourceWithItsCaAndOneWithTheJdkTrustStore() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("certs"), List.of("vllm-1"));
        KvListenerConfig.Result r = load("sources:\n  - {backend: vllm-1, url: \"https://vllm-1:8443/kv/events\", "
                + "tls: {ca: \"" + certs.caCert() + "\"}}\n  - {backend: vllm-2, url: \"https://vllm-2/kv/events\"}\n");
        assertThat(r.problems()).isEmpty();
        KvListenerConfig c = r.config();
        assertThat(c).isNotNull();
        assertThat(c.trust()).containsOnlyKeys("vllm-1");
        assertThat(c.trust().get("vllm-1").trusted()).hasSize(1);
    }

    @Test
    void aTlsBlockOnHttpAndAnUnusableCaAreErrorsAtTheirPaths() throws Exception {
        Path notPem = Files.writeString(dir.resolve("x.pem"), "hello");
        KvListenerConfig.Result r = load("sources:\n  - {backend: vllm-1, url: \"http://vllm-1/\", tls: {ca: \""
                + notPem + "\"}}\n  - {backend: vllm-2, url: \"https://vllm-2/\", tls: {ca: \"" + notPem + "\"}}\n"
                + "  - {backend: vllm-3, url: \"https://vllm-3/\", tls: {ca: \"" + dir.resolve("none.pem") + "\"}}\n");
        assertThat(r.config()).isNull();
        assertThat(r.problems().stream().map(Problem::path)).containsExactly("sources[0].tls", "sources[1].tls.ca",
                "sources[2].tls.ca");
    }

    @Test
    void refusesMissingDuplicateAndBadUrlSources() throws Exception {
        KvListenerConfig.Result r = load("sources:\n  - {backend: vllm-1, url: \"ftp://vllm-1:8000/\"}\n"
                + "  - {backend: vllm-2, url: \"http://vllm-2:8000/\"}\n  - {backend: vllm-2, url: \"http://x:1/\"}\n"
                + "  - {url: \"http://x:1/\"}\n");
        assertThat(r.config()).isNull();
        assertThat(r.problems().stream().map(Problem::path)).contains("sources[0].url", "sources[2].backend",
                "sources[3].backend");
        assertThat(r.problems().toString()).doesNotContain("secret-token-123");
        assertThat(load("").problems().stream().map(Problem::path)).contains("sources");
    }
}
