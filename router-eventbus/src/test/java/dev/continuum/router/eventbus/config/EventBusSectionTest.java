package dev.continuum.router.eventbus.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigRenderer;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.Secret;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class EventBusSectionTest {
    private static final EventBusSection SECTION = new EventBusSection();
    private static final String HASH = TokenHash.of("t0ken").toString();
    private static final String HEAD = "backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n"
            + "dynamo:\n  enabled: true\n  event_bus:\n    enabled: true\n    tls: {cert: /c.pem, key: /k.pem}\n";
    private static final String ONE_BROKER = "    brokers: [{id: broker-a.dynamo, token_hash: \"" + HASH
            + "\", namespaces: [dynamo]}]\n";

    private static LoadResult load(String yaml) {
        return ConfigLoader.builder().dynamoSection(SECTION).build().loadString(yaml);
    }

    private static List<String> errors(String yaml) {
        return load(yaml).errors().stream().map(Problem::toString).toList();
    }

    @Test
    void defaultsMatchTheDocumentedValues() {
        EventBusConfig config = load(HEAD + ONE_BROKER).orThrow().dynamo().section(SECTION);
        assertThat(config.listen().toString()).isEqualTo("0.0.0.0:7443");
        assertThat(config.maxSessions()).isEqualTo(64);
        assertThat(config.maxStreamsPerSession()).isEqualTo(1024);
        assertThat(config.maxSessionBufferBytes()).isEqualTo(64L << 20);
        assertThat(config.streamBufferBytes()).isEqualTo(16 * 1024);
        assertThat(config.maxConnections()).isEqualTo(256);
        assertThat(config.heartbeatInterval()).hasSeconds(10);
        assertThat(config.idleTimeout()).hasSeconds(30);
        BrokerEntry entry = config.brokers().get(0);
        assertThat(entry.role()).isEqualTo(BusRole.BROKER);
        assertThat(entry.clientId()).isEqualTo("broker-a.dynamo");
        assertThat(entry.tokenHash()).isEqualTo(TokenHash.parse(HASH).orElseThrow());
    }

    @Test
    void theReadbackMasksTokenHashesLikeSecrets() {
        RouterConfig config = load(HEAD + ONE_BROKER).orThrow();
        // config show and GET /admin/config (and the config history) render through the same masked tree.
        String yaml = ConfigRenderer.get().yaml(config);
        String json = ConfigRenderer.get().json(config);
        Map<String, Object> tree = ConfigRenderer.get().tree(config);
        for (String shown : List.of(yaml, json, tree.toString())) {
            assertThat(shown).doesNotContain(HASH).doesNotContain(HASH.substring(TokenHash.PREFIX.length()))
                    .contains("token_hash").contains(Secret.MASK);
        }
        assertThat(yaml).contains("token_hash: '" + Secret.MASK + "'");
    }

    @Test
    void theStreamBufferIsClampedAndTheSessionBufferHasAFloor() {
        EventBusConfig big = load(HEAD + ONE_BROKER + "    max_streams_per_session: 16\n"
                + "    max_session_buffer_bytes: 1GiB\n").orThrow().dynamo().section(SECTION);
        assertThat(big.streamBufferBytes()).isEqualTo(1 << 20);
        assertThat(errors(HEAD + ONE_BROKER + "    max_streams_per_session: 1024\n    max_session_buffer_bytes: 32MiB\n"))
                .containsExactly("dynamo.event_bus.max_session_buffer_bytes: 33554432 bytes (expected: at least "
                        + "dynamo.event_bus.max_streams_per_session * 64 KiB = 67108864 bytes, four 16 KiB reservations "
                        + "per stream)");
        assertThat(load(HEAD + ONE_BROKER + "    max_streams_per_session: 1024\n    max_session_buffer_bytes: 64MiB\n")
                .errors()).isEmpty();
    }

    @Test
    void theListenAddressMayNotCollideWithTheHttpServer() {
        String server = "server: {bind_address: [\"127.0.0.1:9000\", \"0.0.0.0:7443\"]}\n";
        assertThat(errors(server + HEAD + ONE_BROKER)).containsExactly("dynamo.event_bus.listen: \"0.0.0.0:7443\" "
                + "collides with server.bind_address[1] \"0.0.0.0:7443\" (expected: a port of its own)");
        assertThat(errors("server: {bind_address: \"0.0.0.0:9000\"}\n" + HEAD + "    listen: \"127.0.0.1:9000\"\n"
                + ONE_BROKER)).containsExactly("dynamo.event_bus.listen: \"127.0.0.1:9000\" collides with "
                + "server.bind_address \"0.0.0.0:9000\" (expected: a port of its own)");
        assertThat(errors("server: {bind_address: \"127.0.0.1:9000\"}\n" + HEAD + "    listen: \"127.0.0.2:9000\"\n"
                + ONE_BROKER)).isEmpty();
    }

    @Test
    void badEntriesAreReportedWithTheirFieldPaths() {
        String yaml = HEAD + "    brokers:\n"
                + "      - {id: Broker-A, token_hash: \"" + HASH + "\"}\n"
                + "      - {id: b, token: plain}\n"
                + "      - {id: c, token_hash: \"sha256:ABC\"}\n"
                + "      - {id: d, role: kv_listener, token_hash: \"" + TokenHash.of("d") + "\", namespaces: [x]}\n"
                + "      - {id: e, role: relay, token_hash: \"" + TokenHash.of("e") + "\", namespaces: [x]}\n"
                + "      - {id: f, token_hash: \"" + TokenHash.of("f") + "\", namespaces: [x]}\n"
                + "      - {id: f, token_hash: \"" + TokenHash.of("g") + "\", namespaces: [x]}\n"
                + "      - {id: h, token_hash: \"" + TokenHash.of("f") + "\", namespaces: [x]}\n";
        assertThat(errors(yaml)).containsExactlyInAnyOrder(
                "dynamo.event_bus.brokers[0].id: \"Broker-A\" (expected: a lowercase DNS name such as broker-a.dynamo "
                        + "(no wildcards))",
                "dynamo.event_bus.brokers[1].token: a plaintext token is never configured (expected: token_hash: "
                        + "\"sha256:<64 hex>\", the output of printf %s \"$TOKEN\" | sha256sum)",
                "dynamo.event_bus.brokers[1].token_hash: missing (expected: a token_hash, or tls.client_ca so the entry "
                        + "can use a certificate)",
                "dynamo.event_bus.brokers[2].token_hash: not a token hash (expected: sha256: followed by 64 lowercase "
                        + "hex digits)",
                "dynamo.event_bus.brokers[3].namespaces: set on role kv_listener (expected: backends instead)",
                "dynamo.event_bus.brokers[3].backends: missing (expected: at least one backend this kv_listener may "
                        + "announce)",
                "dynamo.event_bus.brokers[4].role: \"relay\" (expected: broker or kv_listener)",
                "dynamo.event_bus.brokers[6].id: \"f\" (expected: each id once; same as dynamo.event_bus.brokers[5].id)",
                "dynamo.event_bus.brokers[7].token_hash: the same hash as dynamo.event_bus.brokers[5].token_hash "
                        + "(expected: one token per entry, so a token names one entry)");
        assertThat(errors(yaml)).noneMatch(line -> line.contains("plain\"") || line.contains("ABC"));
    }

    @Test
    void enabledNeedsTlsAndBrokersAndAnIdleTimeoutAboveTheHeartbeat() {
        assertThat(errors("dynamo:\n  event_bus:\n    enabled: true\n    heartbeat_interval: 10s\n"
                + "    idle_timeout: 10s\n")).containsExactlyInAnyOrder(
                "dynamo.event_bus.tls: missing (expected: cert and key; the listener speaks TLS 1.3 only)",
                "dynamo.event_bus.idle_timeout: \"10s\" (expected: longer than dynamo.event_bus.heartbeat_interval, "
                        + "10000ms, so a live client can answer in time)");
        assertThat(errors(HEAD)).containsExactly("dynamo.event_bus.brokers: none (expected: at least one entry while "
                + "enabled; nobody could connect)");
    }

    @Test
    void credentialsReloadImmediatelyAndTheAddressRestartsTheListener() {
        EventBusConfig before = load(HEAD + ONE_BROKER).orThrow().dynamo().section(SECTION);
        EventBusConfig moreSessions = load(HEAD + ONE_BROKER + "    max_sessions: 8\n").orThrow().dynamo()
                .section(SECTION);
        EventBusConfig moved = load(HEAD + ONE_BROKER + "    listen: \"0.0.0.0:7444\"\n").orThrow().dynamo()
                .section(SECTION);
        assertThat(SECTION.reloadClass(before, moreSessions)).isEqualTo(ReloadClass.IMMEDIATE);
        assertThat(SECTION.reloadClass(before, moved)).isEqualTo(ReloadClass.RESTART_SUBSYSTEM);
    }
}
