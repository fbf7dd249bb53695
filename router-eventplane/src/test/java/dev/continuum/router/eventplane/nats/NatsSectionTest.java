package dev.continuum.router.eventplane.nats;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.Secret;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NatsSectionTest {
    private static final NatsSection SECTION = new NatsSection();
    private static final String BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";

    private static LoadResult load(String natsYaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build()
                .loadString(BACKEND + "dynamo:\n  nats: " + natsYaml + "\n");
    }

    private static List<String> errors(LoadResult r) {
        return r.errors().stream().map(Problem::toString).toList();
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                Arguments.of("a server with credentials in the URL", "{servers: [\"nats://u:p@h:4222\"]}",
                        "dynamo.nats.servers[0]"),
                Arguments.of("another scheme", "{servers: [\"http://h:4222\"]}", "dynamo.nats.servers[0]"),
                Arguments.of("no port", "{servers: [\"nats://h\"]}", "dynamo.nats.servers[0]"),
                Arguments.of("two ways to authenticate", "{servers: [\"tls://h:1\"], auth: {token: t, nkey_seed: SUAB}}",
                        "dynamo.nats.auth: 2 ways"),
                Arguments.of("a user without a password", "{servers: [\"tls://h:1\"], auth: {username: u}}",
                        "dynamo.nats.auth.password: missing"),
                Arguments.of("a seed that is not a user seed", "{servers: [\"tls://h:1\"], auth: {nkey_seed: SOAB}}",
                        "dynamo.nats.auth.nkey_seed"),
                Arguments.of("a client certificate without its key",
                        "{servers: [\"tls://h:1\"], tls: {client_cert: /c.pem}}", "dynamo.nats.tls.client_key: missing"),
                Arguments.of("a connect timeout below 100ms", "{connect_timeout: 10ms}", "dynamo.nats.connect_timeout"),
                Arguments.of("an ack wait below a second",
                        "{jetstream: {kv_events_stream: KV, consumer_prefix: r, ack_wait: 100ms}}",
                        "dynamo.nats.jetstream.ack_wait"),
                Arguments.of("an ack wait above ten minutes",
                        "{jetstream: {kv_events_stream: KV, consumer_prefix: r, ack_wait: 11m}}",
                        "dynamo.nats.jetstream.ack_wait"),
                Arguments.of("more than 16 servers", "{servers: [" + "\"nats://h:1\", ".repeat(16) + "\"nats://h:1\"]}",
                        "dynamo.nats.servers: 17 servers"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void reportsEachRuleWithItsPath(String rule, String yaml, String error) {
        assertThat(errors(load(yaml))).singleElement().asString().startsWith(error);
    }

    @Test
    void aPasswordInAServerUrlIsNotShownInTheError() {
        assertThat(errors(load("{servers: [\"nats://u:hunter2@h:4222\"]}"))).singleElement().asString()
                .doesNotContain("hunter2");
    }

    @Test
    void bindsEveryKey() {
        NatsConfig c = load("{servers: [\"tls://nats-1:4222\", \"nats://10.0.0.5:4222\"], tls: {ca_cert: /etc/nats/ca.pem, "
                + "client_cert: /etc/nats/c.pem, client_key: /etc/nats/k.pem}, auth: {username: router, password: s3cret}, "
                + "connect_timeout: 2s, reconnect_wait: 250ms}").orThrow().dynamo().section(SECTION);
        assertThat(c.servers()).containsExactly("tls://nats-1:4222", "nats://10.0.0.5:4222");
        assertThat(c.tls()).isEqualTo(new NatsTlsConfig(Path.of("/etc/nats/ca.pem"), Path.of("/etc/nats/c.pem"),
                Secret.of("/etc/nats/k.pem")));
        assertThat(c.auth()).isEqualTo(new NatsAuthConfig(null, "router", Secret.of("s3cret"), null, null));
        assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.reconnectWait()).isEqualTo(Duration.ofMillis(250));
        assertThat(c.enabled()).isTrue();
    }

    @Test
    void theAckWaitIsBoundAndDefaultsToFiveSeconds() {
        NatsConfig set = load("{jetstream: {kv_events_stream: KV, consumer_prefix: r, ack_wait: 30s}}").orThrow()
                .dynamo().section(SECTION);
        assertThat(set.jetstream()).isEqualTo(new NatsJetStreamConfig("KV", "r", Duration.ofSeconds(30)));
        NatsConfig unset = load("{jetstream: {kv_events_stream: KV, consumer_prefix: r}}").orThrow().dynamo()
                .section(SECTION);
        assertThat(java.util.Objects.requireNonNull(unset.jetstream()).ackWait()).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void absentMeansNoConnection() {
        assertThat(ConfigLoader.builder().dynamoSection(SECTION).build().loadString(BACKEND).orThrow().dynamo()
                .section(SECTION)).isEqualTo(NatsConfig.DEFAULTS);
        assertThat(NatsConfig.DEFAULTS.enabled()).isFalse();
    }

    @Test
    void credentialsOverPlaintextWarn() {
        LoadResult r = load("{servers: [\"nats://h:4222\"], auth: {token: abc}}");
        assertThat(r.errors()).isEmpty();
        assertThat(r.warnings().stream().map(Problem::toString)).singleElement().asString()
                .startsWith("dynamo.nats.auth").contains("cleartext");
    }
}
