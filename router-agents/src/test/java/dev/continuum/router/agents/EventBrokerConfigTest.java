package dev.continuum.router.agents;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.Problem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The event broker's config file: a valid one loads; every bad field is reported by its path, never the token. */
class EventBrokerConfigTest {
    @TempDir
    Path dir;

    private EventBrokerConfig.Result load(String yaml) throws Exception {
        return EventBrokerConfig.load(Files.writeString(dir.resolve("broker.yaml"), yaml), Map.of());
    }

    private static List<String> errors(EventBrokerConfig.Result r) {
        return r.problems().stream().filter(p -> p.severity() == Problem.Severity.ERROR)
                .map(p -> p.path() + ": " + p.message()).toList();
    }

    @Test
    void aFileNestedTenThousandLevelsDeepIsAnErrorWithItsPathAndLine() throws Exception {
        Path file = Files.writeString(dir.resolve("broker.yaml"), "discovery:\n  kubernetes: "
                + "[".repeat(10_000) + "]".repeat(10_000) + "\n");
        EventBrokerConfig.Result r = EventBrokerConfig.load(file, Map.of());
        assertThat(r.config()).isNull();
        assertThat(errors(r)).singleElement().satisfies(e -> assertThat(e)
                .startsWith("discovery.kubernetes" + "[0]".repeat(126) + ": nested deeper than 128 levels at " + file
                        + ":2:"));
    }

    @Test
    void aValidFileGivesTheAgentItsSettings() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cret-token\n");
        EventBrokerConfig.Result r = load("bus:\n  url: \"https://router.example.com:7443\"\n  client_id: broker-a\n"
                + "  token_file: \"" + token + "\"\n"
                + "discovery:\n  source: kubernetes\n  kubernetes: {namespace: workers, dynamo_namespaces: [dynamo, "
                + "other]}\n");
        assertThat(r.problems()).isEmpty();
        AgentSettings a = r.config().agent();
        assertThat(a.host()).isEqualTo("router.example.com");
        assertThat(a.port()).isEqualTo(7443);
        assertThat(a.token()).isEqualTo("s3cret-token");
        assertThat(a.clientId()).isEqualTo("broker-a");
        assertThat(a.namespaces()).containsExactly("dynamo", "other");
        assertThat(a.trustedCa()).isNull();
    }

    @Test
    void everyBadFieldIsReportedByPathAndTheTokenIsNeverEchoed() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "bad token with spaces");
        EventBrokerConfig.Result r = load("bus:\n  url: \"http://user:pw@router:7443/x\"\n  client_id: \"no spaces!\"\n"
                + "  token_file: \"" + token + "\"\n  tls: {cert: \"" + token + "\"}\n  drain_timeout: 0s\n"
                + "  colour: blue\n"
                + "discovery:\n  source: etcd\n");
        assertThat(r.config()).isNull();
        assertThat(errors(r)).anySatisfy(e -> assertThat(e).startsWith("bus.url: ").contains("https://host:port")
                        .doesNotContain("pw"))
                .anySatisfy(e -> assertThat(e).startsWith("bus.client_id: "))
                .anySatisfy(e -> assertThat(e).startsWith("bus.token_file: ").contains("visible ASCII"))
                .anySatisfy(e -> assertThat(e).startsWith("bus.tls.key: "))
                .anySatisfy(e -> assertThat(e).startsWith("bus.drain_timeout: "))
                .anySatisfy(e -> assertThat(e).startsWith("discovery.source: ").contains("kubernetes"));
        assertThat(r.problems()).anySatisfy(p -> assertThat(p.path()).isEqualTo("bus.colour"));
        assertThat(r.problems().toString()).doesNotContain("bad token with spaces");
    }

    @Test
    void withoutAnyCredentialOrBusSectionNothingStarts() throws Exception {
        EventBrokerConfig.Result r = load("discovery:\n  source: kubernetes\n  kubernetes: {namespace: workers}\n");
        assertThat(r.config()).isNull();
        assertThat(errors(r)).anySatisfy(e -> assertThat(e).startsWith("bus: "))
                .anySatisfy(e -> assertThat(e).startsWith("bus.url: "))
                .anySatisfy(e -> assertThat(e).startsWith("bus.client_id: "))
                .anySatisfy(e -> assertThat(e).startsWith("bus.token_file: "));
    }
}
