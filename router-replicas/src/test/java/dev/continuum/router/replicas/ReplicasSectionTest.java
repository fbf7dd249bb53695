package dev.continuum.router.replicas;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReplicasSectionTest {
    private static final ReplicasSection SECTION = new ReplicasSection();
    private static final String BACKEND = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n";

    private static LoadResult load(String yaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build()
                .loadString(BACKEND + "dynamo:\n  replicas: " + yaml + "\n");
    }

    private static List<String> errors(LoadResult r) {
        return r.errors().stream().map(Problem::toString).toList();
    }

    static Stream<Arguments> rules() {
        return Stream.of(
                Arguments.of("a group with a dot", "{group: a.b}", "dynamo.replicas.group"),
                Arguments.of("a wildcard replica ID", "{replica_id: \">\"}", "dynamo.replicas.replica_id"),
                Arguments.of("a peer timeout not above the heartbeat",
                        "{heartbeat_interval: 1s, peer_timeout: 1s}", "dynamo.replicas.peer_timeout"),
                Arguments.of("a message bound above nats-server's max_payload", "{max_message_bytes: 2000000}",
                        "dynamo.replicas.max_message_bytes"),
                Arguments.of("too many events per batch", "{max_batch_events: 5000}",
                        "dynamo.replicas.max_batch_events"),
                Arguments.of("a batch interval of a second", "{batch_interval: 1s}", "dynamo.replicas.batch_interval"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void reportsEachRuleWithItsPath(String rule, String yaml, String error) {
        assertThat(errors(load(yaml))).singleElement().asString().startsWith(error);
    }

    @Test
    void bindsEveryKey() {
        ReplicasConfig c = load("{enabled: true, group: front-a, replica_id: router_0, heartbeat_interval: 200ms, "
                + "peer_timeout: 400ms, batch_interval: 2ms, max_batch_events: 64, max_message_bytes: 8192, "
                + "max_peers: 4, session_ttl: 90s}").orThrow().dynamo().section(SECTION);
        assertThat(c).isEqualTo(new ReplicasConfig(true, "front-a", "router_0", Duration.ofMillis(200),
                Duration.ofMillis(400), Duration.ofMillis(2), 64, 8192, 4, Duration.ofSeconds(90)));
    }

    @Test
    void absentIsOff() {
        assertThat(ConfigLoader.builder().dynamoSection(SECTION).build().loadString(BACKEND).orThrow().dynamo()
                .section(SECTION)).isEqualTo(ReplicasConfig.DEFAULTS);
    }
}
