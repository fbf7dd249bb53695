package dev.continuum.router.discovery.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.Secret;
import dev.continuum.router.discovery.DiscoverySourceKind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every rule of {@code dynamo.discovery}, through core's loader, as the router loads it. */
@Timeout(30)
class DiscoverySectionTest {
    private static final Map<String, String> ENV = Map.of("DYN_FILE_KV", "/var/lib/dynamo/kv");
    private static final DiscoverySection SECTION = DiscoverySection.create(ENV);

    private static LoadResult load(String discoveryYaml) {
        return load("dynamo:\n  enabled: false\n  discovery:\n" + discoveryYaml.indent(4), ENV);
    }

    private static LoadResult load(String yaml, Map<String, String> env) {
        return ConfigLoader.builder().environment(env).dynamoSection(DiscoverySection.create(env)).build()
                .loadString("backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n" + yaml);
    }

    private static DiscoveryConfig bound(String discoveryYaml) {
        LoadResult result = load(discoveryYaml);
        assertThat(lines(result.errors())).isEmpty();
        return result.orThrow().dynamo().section(SECTION);
    }

    private static List<String> lines(List<Problem> problems) {
        return problems.stream().map(Problem::toString).collect(Collectors.toList());
    }

    private static List<String> discoveryWarnings(LoadResult result) {
        return lines(result.warnings()).stream().filter(l -> l.startsWith("dynamo.discovery")).toList();
    }

    @Test
    void anOmittedSectionBindsTheDefaults() {
        LoadResult result = load("", ENV);
        DiscoveryConfig config = result.orThrow().dynamo().section(SECTION);
        assertThat(config.source()).isEqualTo(DiscoverySourceKind.ETCD);
        assertThat(config.etcd().endpoints()).isEmpty();
        assertThat(config.etcd().effectiveNamespaces()).containsExactly("dynamo");
        assertThat(config.etcd().watchReconnectBackoff()).isEqualTo(new BackoffConfig(Duration.ofMillis(500),
                Duration.ofSeconds(30)));
        assertThat(config.file().root()).isEqualTo(Path.of("/var/lib/dynamo/kv"));
        assertThat(config.file().ttl()).isEqualTo(Duration.ofSeconds(10));
        assertThat(config.file().rescanInterval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(config).isEqualTo(SECTION.defaults());
    }

    @Test
    void theSeedsExampleBinds() {
        DiscoveryConfig config = bound("""
                etcd:
                  endpoints: ["http://etcd-0.dynamo.svc:2379", "http://etcd-1.dynamo.svc:2379"]
                  namespace: "dynamo"
                  watch_reconnect_backoff:
                    initial: "500ms"
                    max: "30s"
                """);
        assertThat(config.etcd().endpoints()).containsExactly("http://etcd-0.dynamo.svc:2379",
                "http://etcd-1.dynamo.svc:2379");
        assertThat(config.etcd().watchReconnectBackoff()).isEqualTo(BackoffConfig.defaults());
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "http://etcd-0.dynamo.svc:2379 | http://etcd-0.dynamo.svc:2379",
            "https://etcd:2379 | https://etcd:2379",
            "HTTP://etcd:2379 | http://etcd:2379",
            "etcd-0:2379 | http://etcd-0:2379",
            "10.0.0.1:2379 | http://10.0.0.1:2379",
            "[::1]:2379 | http://[::1]:2379",
            "http://[fd00::12]:2379 | http://[fd00::12]:2379"})
    void endpointsAreUrlsOrBareHostPortNormalizedToHttp(String endpoint, String normalized) {
        assertThat(bound("etcd: {endpoints: [\"" + endpoint + "\"]}").etcd().endpoints()).containsExactly(normalized);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(delimiter = '|', value = {
            "user@h:2379 | no credentials in the URL",
            "http://user:pass@h:2379 | no credentials in the URL",
            "https://user@h:2379 | no credentials in the URL",
            "http://h:2379/ | no path in the URL",
            "http://h:2379/v3/kv | no path in the URL",
            "http://h:2379? | no query string in the URL",
            "http://h:2379?timeout=1s | no query string in the URL",
            "http://h:2379# | no fragment in the URL",
            "h:2379#frag | no fragment in the URL",
            "h | host:port with a port",
            "http://h | host:port with a port",
            "h:0 | a port in 1..65535",
            "h:65536 | a port in 1..65535",
            "h:port | a port in 1..65535",
            "h: | a port in 1..65535",
            "::1:2379 | an IPv6 address in brackets, like [::1]:2379",
            "[::1] | host:port with a port, IPv6 as [::1]:2379",
            "[nope]:2379 | an IPv6 address in brackets, like [::1]:2379",
            "grpc://h:2379 | an http:// or https:// URL",
            "unix:///run/etcd.sock | an http:// or https:// URL",
            ":2379 | a host name or IP address before the port",
            "h h:2379 | an http(s)://host:port URL or host:port, without spaces"})
    void anEndpointWithAnythingButSchemeHostAndPortIsAnError(String endpoint, String expectation) {
        LoadResult result = load("etcd: {endpoints: [\"http://ok:2379\", \"" + endpoint + "\"]}");
        // Credentials are never echoed: the user info shows as ****.
        String shown = endpoint.replaceFirst("^([a-z]+://)?[^@/]*@", "$1****@");
        assertThat(lines(result.errors())).containsExactly("dynamo.discovery.etcd.endpoints[1]: \"" + shown
                + "\" (expected: " + expectation + ")");
    }

    @Test
    void anEndpointThatIsNotAStringIsAnError() {
        assertThat(lines(load("etcd: {endpoints: [{host: h}]}").errors())).singleElement().asString()
                .startsWith("dynamo.discovery.etcd.endpoints[0]:");
    }

    @Test
    void atMostSixteenEndpoints() {
        String seventeen = java.util.stream.IntStream.rangeClosed(1, 17).mapToObj(i -> "\"h" + i + ":2379\"")
                .collect(Collectors.joining(", "));
        assertThat(lines(load("etcd: {endpoints: [" + seventeen + "]}").errors()))
                .containsExactly("dynamo.discovery.etcd.endpoints: 17 endpoints (expected: at most 16)");
        assertThat(bound("etcd: {endpoints: [" + seventeen.substring(seventeen.indexOf(',') + 2) + "]}")
                .etcd().endpoints()).hasSize(16);
    }

    @Test
    void endpointsCannotMixHttpAndHttps() {
        assertThat(lines(load("etcd: {endpoints: [\"http://a:2379\", \"https://b:2379\"]}").errors())).containsExactly(
                "dynamo.discovery.etcd.endpoints: mixes http:// and https:// endpoints (expected: one scheme for all "
                        + "endpoints)");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"http://a:2379", "a:2379"})
    void httpEndpointsCannotUseATlsBlock(String endpoint) {
        assertThat(lines(load("etcd:\n  endpoints: [\"" + endpoint + "\"]\n  tls: {ca_cert: /etc/etcd/ca.pem}\n")
                .errors())).singleElement().asString().startsWith("dynamo.discovery.etcd.tls: a tls block with http://");
        assertThat(bound("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls: {ca_cert: /etc/etcd/ca.pem}\n").etcd().tls())
                .isEqualTo(new EtcdTlsConfig(Path.of("/etc/etcd/ca.pem"), null, null, null));
    }

    @Test
    void theSeedsTlsAndAuthBlocksBind() {
        EtcdConfig etcd = bound("""
                etcd:
                  endpoints: ["https://etcd-0:2379"]
                  tls:
                    ca_cert: "/etc/etcd/ca.pem"
                    client_cert: "/etc/etcd/client.pem"
                    client_key: "/etc/etcd/client-key.pem"
                    server_name: "etcd.internal"
                  auth:
                    username: "router"
                    password: "${ETCD_PASSWORD:-s3cret}"
                """).etcd();
        assertThat(etcd.tls()).isEqualTo(new EtcdTlsConfig(Path.of("/etc/etcd/ca.pem"), Path.of("/etc/etcd/client.pem"),
                Secret.of("/etc/etcd/client-key.pem"), "etcd.internal"));
        assertThat(etcd.auth()).isEqualTo(new EtcdAuthConfig("router", Secret.of("s3cret")));
        assertThat(etcd.usesTls()).isTrue();
    }

    @Test
    void anEmptyTlsBlockMeansTlsWithTheJdkTrustStore() {
        assertThat(bound("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls:\n").etcd().tls())
                .isEqualTo(new EtcdTlsConfig(null, null, null, null));
        assertThat(bound("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls: {}\n").etcd().tls())
                .isEqualTo(new EtcdTlsConfig(null, null, null, null));
    }

    @Test
    void clientCertAndClientKeyAreSetTogether() {
        assertThat(lines(load("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls: {client_cert: /c.pem}\n").errors()))
                .containsExactly("dynamo.discovery.etcd.tls.client_key: missing (expected: client_cert and client_key "
                        + "set together)");
        assertThat(lines(load("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls: {client_key: /k.pem}\n").errors()))
                .containsExactly("dynamo.discovery.etcd.tls.client_cert: missing (expected: client_cert and client_key "
                        + "set together)");
    }

    @Test
    void aServerNameIsAHostName() {
        assertThat(lines(load("etcd:\n  endpoints: [\"https://a:2379\"]\n  tls: {server_name: \"etcd:2379\"}\n")
                .errors())).containsExactly("dynamo.discovery.etcd.tls.server_name: \"etcd:2379\" (expected: a host name)");
    }

    @Test
    void authOverPlaintextIsAWarningAndOverTlsIsNot() {
        String auth = "  auth: {username: router, password: pw}\n";
        assertThat(discoveryWarnings(load("etcd:\n  endpoints: [\"http://a:2379\"]\n" + auth)))
                .containsExactly("dynamo.discovery.etcd.auth: authentication over plaintext http:// without tls: the "
                        + "Authenticate RPC and the session token travel in cleartext");
        assertThat(discoveryWarnings(load("etcd:\n  endpoints: [\"https://a:2379\"]\n" + auth))).isEmpty();
    }

    @Test
    void authNeedsAUsernameAndAPassword() {
        assertThat(lines(load("etcd:\n  endpoints: [\"https://a:2379\"]\n  auth: {username: router}\n").errors()))
                .containsExactly("dynamo.discovery.etcd.auth.password: missing (expected: a non-empty password)");
        assertThat(lines(load("etcd:\n  endpoints: [\"https://a:2379\"]\n  auth: {password: pw}\n").errors()))
                .singleElement().asString().startsWith("dynamo.discovery.etcd.auth.username:")
                .endsWith("(expected: a non-empty username)");
    }

    @ParameterizedTest(name = "namespace {0}: valid {1}")
    @CsvSource(delimiter = '|', value = {
            "dynamo | true",
            "ns.one | true",
            "Dynamo-Prod_1 | true",
            "kbm-g-np-kt-a-solar-pro4-4tp-agg | true",
            "\"\" | false",
            "a/b | false",
            "\"a b\" | false",
            "\"a\\tb\" | false",
            "\"a\\u0007b\" | false",
            "\"a\\u00a0b\" | false"})
    void aNamespaceIsNonEmptyWithoutSlashesWhitespaceOrControlCharacters(String yamlValue, boolean valid) {
        LoadResult result = load("etcd: {namespace: " + yamlValue + "}");
        if (valid) {
            assertThat(lines(result.errors())).isEmpty();
        } else {
            assertThat(lines(result.errors())).singleElement().asString()
                    .startsWith("dynamo.discovery.etcd.namespace: ")
                    .endsWith("(expected: a non-empty name without '/', whitespace or control characters)");
        }
    }

    @Test
    void namespacesAcceptsUpToSixteenUniqueEntries() {
        String sixteen = java.util.stream.IntStream.rangeClosed(1, 16).mapToObj(i -> "ns" + i)
                .collect(Collectors.joining(", "));
        assertThat(bound("etcd: {namespaces: [" + sixteen + "]}").etcd().effectiveNamespaces()).hasSize(16);
        assertThat(lines(load("etcd: {namespaces: [" + sixteen + ", ns17]}").errors())).containsExactly(
                "dynamo.discovery.etcd.namespaces: 17 namespaces (expected: at most 16, MAX_DYNAMO_NAMESPACES)");
        assertThat(lines(load("etcd: {namespaces: [prod, canary, prod]}").errors())).containsExactly(
                "dynamo.discovery.etcd.namespaces[2]: \"prod\" (expected: unique namespaces)");
        assertThat(lines(load("etcd: {namespaces: [prod, \"a/b\"]}").errors())).containsExactly(
                "dynamo.discovery.etcd.namespaces[1]: \"a/b\" (expected: a non-empty name without '/', whitespace or "
                        + "control characters)");
    }

    @Test
    void namespacesExcludesANonDefaultNamespace() {
        assertThat(lines(load("etcd: {namespace: prod, namespaces: [prod, canary]}").errors())).containsExactly(
                "dynamo.discovery.etcd.namespace: \"prod\" (expected: either namespace or namespaces, not both (a "
                        + "non-default namespace excludes the list))");
        assertThat(bound("etcd: {namespace: dynamo, namespaces: [prod, canary]}").etcd().effectiveNamespaces())
                .containsExactly("prod", "canary");
    }

    @ParameterizedTest(name = "initial {0}, max {1}")
    @CsvSource(delimiter = '|', value = {
            "500ms | 30s | ",
            "1s | 1s | ",
            "2s | 1s | dynamo.discovery.etcd.watch_reconnect_backoff.max: 1000 ms is below initial (2000 ms) (expected: max >= initial)",
            "0s | 1s | dynamo.discovery.etcd.watch_reconnect_backoff.initial:",
            "500ms | -1s | dynamo.discovery.etcd.watch_reconnect_backoff.max:",
            "soon | 1s | dynamo.discovery.etcd.watch_reconnect_backoff.initial:"})
    void theBackoffMaxIsAtLeastItsInitial(String initial, String max, String error) {
        LoadResult result = load("etcd: {watch_reconnect_backoff: {initial: \"" + initial + "\", max: \"" + max + "\"}}");
        if (error == null) {
            assertThat(lines(result.errors())).isEmpty();
        } else {
            assertThat(lines(result.errors())).singleElement().asString().startsWith(error);
        }
    }

    @Test
    void endpointsAreRequiredOnlyWhenDynamoIsEnabledWithTheEtcdSource() {
        assertThat(lines(load("dynamo:\n  enabled: true\n", ENV).errors())).containsExactly(
                "dynamo.discovery.etcd.endpoints: [] (expected: at least one endpoint when dynamo.enabled is true)");
        assertThat(lines(load("dynamo:\n  enabled: false\n", ENV).errors())).isEmpty();
        assertThat(lines(load("dynamo:\n  enabled: true\n  discovery: {source: file}\n", ENV).errors())).isEmpty();
    }

    @Test
    void anUnknownSourceIsRefused() {
        assertThat(lines(load("source: consul").errors())).containsExactly("dynamo.discovery.source: \"consul\" "
                + "(expected: " + DiscoverySection.SOURCES + ")");
    }

    @Test
    void anInactiveKubernetesSectionIsBoundWithoutTheActiveSourcesRequirements() {
        DiscoveryConfig config = bound("kubernetes: {namespace: dynamo}");
        assertThat(config.source()).isEqualTo(DiscoverySourceKind.ETCD);
        assertThat(config.kubernetes().namespace()).isEqualTo("dynamo");
        assertThat(discoveryWarnings(load("kubernetes: {namespace: dynamo}"))).isEmpty();
    }

    @Test
    void theFileStoreSectionBindsWithUpstreamDefaults() {
        DiscoveryConfig config = bound("source: file\nfile: {root: /srv/kv, namespaces: [a, b], ttl: 20s, "
                + "rescan_interval: 250ms}");
        assertThat(config.source()).isEqualTo(DiscoverySourceKind.FILE);
        assertThat(config.file()).isEqualTo(new FileStoreConfig(Path.of("/srv/kv"), "dynamo", List.of("a", "b"),
                Duration.ofSeconds(20), Duration.ofMillis(250)));
        assertThat(config.namespaces()).containsExactly("a", "b");
        assertThat(load("", Map.of()).orThrow().dynamo().section(SECTION).file().root())
                .isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "dynamo_store_kv"));
    }

    @Test
    void theFileStoreTtlHasUpstreamsOneSecondFloorAndASlowRescanWarns() {
        assertThat(lines(load("file: {ttl: 500ms}").errors())).singleElement().asString()
                .startsWith("dynamo.discovery.file.ttl:");
        assertThat(discoveryWarnings(load("file: {ttl: 2s, rescan_interval: 5s}"))).singleElement().asString()
                .startsWith("dynamo.discovery.file.rescan_interval: rescans less often than the ttl");
        assertThat(lines(load("file: {namespace: \"a b\"}").errors())).singleElement().asString()
                .startsWith("dynamo.discovery.file.namespace:");
    }

    @Test
    void unknownKeysAreReportedWithASuggestion() {
        assertThat(discoveryWarnings(load("etcd: {endpoint: [\"a:2379\"]}"))).singleElement().asString()
                .contains("dynamo.discovery.etcd.endpoint").contains("endpoints");
    }

    @Test
    void everyProblemOfTheSectionIsReportedInOnePass() {
        LoadResult result = load("""
                source: consul
                etcd:
                  endpoints: ["user@h:2379", "http://h:2379/"]
                  namespace: "a/b"
                  tls: {client_cert: /c.pem}
                  watch_reconnect_backoff: {initial: 2s, max: 1s}
                """);
        assertThat(result.errors()).hasSize(6);
    }

    @Test
    void theReadbackMasksTheClientKeyAndThePasswordAndLoadsBack() {
        String yaml = """
                dynamo:
                  enabled: true
                  discovery:
                    etcd:
                      endpoints: ["https://etcd-0:2379"]
                      namespaces: [prod, canary]
                      tls: {ca_cert: /ca.pem, client_cert: /c.pem, client_key: /k.pem, server_name: etcd.internal}
                      auth: {username: router, password: pw}
                      watch_reconnect_backoff: {initial: 250ms, max: 1m30s}
                    file: {root: /srv/kv, ttl: 15s}
                """;
        ConfigLoader loader = ConfigLoader.builder().environment(ENV).dynamoSection(SECTION).build();
        RouterConfig config = loader.loadString("backends: [{name: a, url: \"http://127.0.0.1:8000\"}]\n" + yaml).orThrow();
        String readback = loader.renderer().yaml(config);
        assertThat(readback).doesNotContain("/k.pem").doesNotContain(": pw").contains("********")
                .contains("/ca.pem").contains("/c.pem");
        String filled = readback.replace("client_key: '********'", "client_key: /k.pem")
                .replace("password: '********'", "password: pw");
        RouterConfig reloaded = loader.loadString(filled).orThrow();
        assertThat(reloaded.dynamo().section(SECTION)).isEqualTo(config.dynamo().section(SECTION));
    }

    @Test
    void aChangeOfTheInactiveSourceIsImmediateAndOfTheActiveOneRestartsTheSubsystem() {
        DiscoveryConfig etcd = bound("etcd: {endpoints: [\"a:2379\"]}");
        DiscoveryConfig fileEdited = bound("etcd: {endpoints: [\"a:2379\"]}\nfile: {ttl: 30s}");
        DiscoveryConfig endpointsEdited = bound("etcd: {endpoints: [\"b:2379\"]}");
        assertThat(SECTION.reloadClass(etcd, fileEdited)).isEqualTo(ReloadClass.IMMEDIATE);
        assertThat(SECTION.reloadClass(etcd, endpointsEdited)).isEqualTo(ReloadClass.RESTART_SUBSYSTEM);
    }
}
