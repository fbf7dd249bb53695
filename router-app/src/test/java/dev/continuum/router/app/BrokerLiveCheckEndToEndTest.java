package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.sim.KvEventEncoding;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestCertificates;
import dev.continuum.router.testing.TestUpstream;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.CustomResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.ZContext;

/**
 * The event bus live on a whole router: the router and the event broker each run as their own OS process
 * ({@code continuum-router --config} and {@code continuum-router event-broker --config}), both reading
 * DynamoWorkerMetadata from fabric8's mock API server, with real JeroMQ publishers (kv_metrics and kv-events)
 * behind the broker and {@code dynamo.load.transport: broker}. On it: the operator's live check, {@code scripts/dynamo-broker-live-check.sh}
 * run by bash as a real process (passing on the live tunnel, failing step 2 on an impossible staleness bound and
 * step 1 once the broker is killed), and the dashboard and metric reference checked against the event-bus
 * families this router exports (the demo behind {@link MetricsCatalogTest} runs no bus). The script's kubectl
 * part reads broker Pods the test writes into the mock API server through a kubeconfig; its {@code --probe-image}
 * step needs a real cluster and is not run here.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BrokerLiveCheckEndToEndTest {
    private static final String K8S_NS = "workers";
    private static final String DYN = "dynamo";
    private static final String MODEL = "Qwen/Qwen3-32B";
    private static final String BROKER_TOKEN = "broker-a-token-0123456789";
    /** Never a placeholder word, so the router accepts it; the script must never print it. */
    private static final String ADMIN_TOKEN = "lc7f3a9c2e1b5d4f60a8e2c9d1b7f4e0a3";
    private static final int PUBLISHERS = 3;
    /** Each publisher's kv_metrics and kv-events channels. */
    private static final int SUBSCRIPTIONS = 2 * PUBLISHERS;
    /** The families only a router with the bus running exports ({@link MetricsCatalogTest} leaves them to this test). */
    static final List<String> BUS_PREFIXES = List.of("continuum_dynamo_event_bus_", "continuum_dynamo_broker_");
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;
    private KubernetesMockServer k8s;
    private KubernetesClient admin;
    private final ZContext zmq = new ZContext(1);
    private final List<WorkerPod> publishers = new ArrayList<>();
    private final ScheduledExecutorService traffic = Executors.newScheduledThreadPool(2);
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private TestUpstream shim;
    private Process router;
    private Process broker;
    private int port;
    private int busPort;
    private TestCertificates certs;

    @BeforeAll
    void startTheRouterAndTheBroker() throws Exception {
        k8s = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                new KubernetesCrudDispatcher(), false);
        k8s.init();
        k8s.expectCustomResource(new CustomResourceDefinitionContext.Builder()
                .withGroup("nvidia.com").withVersion("v1alpha1").withKind("DynamoWorkerMetadata")
                .withPlural("dynamoworkermetadatas").withScope("Namespaced").build());
        certs = TestCertificates.generate(dir.resolve("certs"), List.of("localhost", "127.0.0.1"));
        shim = TestUpstream.start("shim").models(MODEL).defaultReply(Reply.echo());
        port = FreePorts.next();
        busPort = FreePorts.next();
        // Both JVMs boot while the fleet is written: they list an empty namespace, then watch it fill.
        router = startRouter();
        broker = startBroker("broker-a");
        admin = k8s.createClient();
        for (int i = 0; i < PUBLISHERS; i++) {
            publishers.add(new WorkerPod(zmq, "vllm-decode-" + i, true));
        }
        EndpointSliceBuilder slice = new EndpointSliceBuilder().withNewMetadata().withName("vllm-slice")
                .withNamespace(K8S_NS).addToLabels("nvidia.com/dynamo-discovery-backend", "kubernetes")
                .addToLabels("nvidia.com/dynamo-discovery-enabled", "true").endMetadata().withAddressType("IPv4");
        int ip = 1;
        for (WorkerPod p : publishers) {
            p.createMetadata(admin, K8S_NS, MODEL);
            slice.addNewEndpoint().withAddresses("10.0.0." + ip++).withNewConditions().withReady(true).endConditions()
                    .withNewTargetRef().withKind("Pod").withName(p.pod).endTargetRef().endEndpoint();
        }
        admin.discovery().v1().endpointSlices().inNamespace(K8S_NS).resource(slice.build()).create();
        createBrokerPod("continuum-event-broker-a-0");
        // Samples every 100 ms, so the script's 1 s scrapes always see the applied counter move.
        traffic.scheduleAtFixedRate(() -> publishers.forEach(p -> {
            p.publish(p.publisherId, p.sequence, p.sequence++ % 50);
            // A root-anchored block stored on rank 0, a new one each time.
            long block = (p.instanceId << 20) + p.kvSequence;
            p.publishKv(p.kvPublisherId, KvEventEncoding.stored(p.instanceId, p.kvSequence, 0, null,
                    new long[] {block}, new long[] {block ^ 0x7777}, 0, 1));
        }), 0, 100, TimeUnit.MILLISECONDS);
        awaitSubscriptions("connected");
    }

    @AfterAll
    void stop() throws InterruptedException {
        traffic.shutdownNow();
        for (Process p : new Process[] {broker, router}) {
            if (p != null) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (shim != null) {
            shim.close();
        }
        zmq.close();
        if (admin != null) {
            admin.close();
        }
        try {
            if (k8s != null) {
                k8s.destroy();
            }
        } catch (IllegalStateException e) {
            // fabric8's mock server may time out closing on a loaded machine after every assertion passed
        }
    }

    @Test
    @Order(1)
    void everyEventBusFamilyTheRouterExportsIsChartedAndDocumented() throws Exception {
        // The broker gauges are written by a debounced reporter: wait until they carry the live session.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(get("/metrics").body())
                .contains("continuum_dynamo_broker_namespace_sessions{namespace=\"dynamo\"} 1.0")
                .contains("continuum_dynamo_broker_subscriptions{broker=\"broker-a.dynamo\",family=\"kv_metrics\"} "
                        + PUBLISHERS + ".0")
                .contains("continuum_dynamo_broker_subscriptions{broker=\"broker-a.dynamo\",family=\"kv-events\"} "
                        + PUBLISHERS + ".0"));
        String metrics = get("/metrics").body();
        Set<String> families = new TreeSet<>();
        Matcher type = Pattern.compile("^# TYPE (\\S+) \\S+$", Pattern.MULTILINE).matcher(metrics);
        while (type.find()) {
            if (bus(type.group(1))) {
                families.add(type.group(1));
            }
        }
        Set<String> samples = new TreeSet<>();
        Matcher sample = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", Pattern.MULTILINE).matcher(metrics);
        while (sample.find()) {
            samples.add(sample.group(1));
        }
        assertThat(families).as("the event-bus families a router with a live bus exports").contains(
                "continuum_dynamo_event_bus_sessions", "continuum_dynamo_event_bus_connections",
                "continuum_dynamo_event_bus_refusals_total", "continuum_dynamo_broker_namespace_sessions",
                "continuum_dynamo_broker_pending_subscriptions", "continuum_dynamo_broker_subscriptions");

        Path root = DeployFiles.repositoryRoot();
        Set<String> queried = MetricsCatalogTest.queriedMetrics(root.resolve("deploy/grafana/continuum-router.json"));
        List<String> busQueries = queried.stream().filter(BrokerLiveCheckEndToEndTest::bus).toList();
        assertThat(samples).as("event-bus metrics the dashboard queries").containsAll(busQueries);
        assertThat(families).as("exported event-bus families on no panel").allMatch(queried::contains);

        List<String> documented = Files.readAllLines(root.resolve("docs/metrics.md")).stream()
                .filter(l -> l.startsWith("| `")).map(l -> l.substring(3, l.indexOf('`', 3)))
                .filter(BrokerLiveCheckEndToEndTest::bus).toList();
        assertThat(documented).as("docs/metrics.md lists exactly the exported event-bus families")
                .containsExactlyInAnyOrderElementsOf(families);
    }

    @Test
    @Order(2)
    void theLiveCheckScriptPassesOnTheLiveTunnelAndNamesTheStepThatFails() throws Exception {
        // Pinned chat completions while the script watches, so decode selections happen under load signals.
        traffic.scheduleAtFixedRate(() -> client.sendAsync(HttpRequest.newBuilder(uri("/v1/chat/completions"))
                .header("content-type", "application/json").header("x-backend", "")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"messages\":"
                        + "[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
                HttpResponse.BodyHandlers.discarding()), 0, 150, TimeUnit.MILLISECONDS);

        // The script only reads, so the runs on the live tunnel go side by side.
        Started liveRun = start(TOKEN_ENV, "--window", "3", "--max-staleness-ms", "3000");
        // A bound below the scrapes' 1 s resolution cannot be met: step 2 fails, with its own exit status.
        Started strictRun = start(TOKEN_ENV, "--window", "1", "--max-staleness-ms", "1");
        // Without the admin token the router refuses the admin view: the router could not be read.
        Started unauthorizedRun = start(Map.of(), "--window", "1");
        // A usage error is refused before anything is read.
        Started usageRun = start(TOKEN_ENV, "--window", "0");

        Run live = liveRun.finish();
        assertThat(live.exit).as(live.output).isZero();
        assertThat(live.output)
                .contains("step 1 (brokers reach the bus): PASS - " + SUBSCRIPTIONS
                        + " subscriptions connected over transport broker")
                .contains("subscriptions kv_metrics connected over broker: " + PUBLISHERS)
                .contains("subscriptions kv-events connected over broker: " + PUBLISHERS)
                .contains("broker broker-a.dynamo carries " + SUBSCRIPTIONS + " subscriptions")
                .contains("namespace dynamo: covered by [broker-a.dynamo], 0 pending")
                .contains("continuum_dynamo_event_bus_sessions 1")
                .contains("pod continuum-event-broker-a-0: phase Running, ready, restarts 0")
                .contains("step 2 (samples stay fresh): PASS")
                .contains("round_robin_stale 0.0%")
                .contains("step 3 (relay latency): SKIP (no --probe-image)")
                .contains("result: PASS")
                .doesNotContain(ADMIN_TOKEN);
        assertThat(live.output).containsPattern("decode selections [1-9][0-9]*: load 100\\.0%")
                .containsPattern("kv-events decoded [1-9][0-9]*");

        Run strict = strictRun.finish();
        assertThat(strict.exit).as(strict.output).isEqualTo(2);
        assertThat(strict.output).contains("step 1 (brokers reach the bus): PASS")
                .contains("step 2 (samples stay fresh): FAIL").contains("more than --max-staleness-ms 1")
                .contains("step 3: SKIP (step 2 failed)").contains("result: FAIL (step 2)");

        Run usage = usageRun.finish();
        assertThat(usage.exit).as(usage.output).isEqualTo(64);
        assertThat(usage.output).contains("--window must be 1..86400 seconds");

        Run unauthorized = unauthorizedRun.finish();
        assertThat(unauthorized.exit).as(unauthorized.output).isEqualTo(4);
        assertThat(unauthorized.output).contains("GET /admin/dynamo/workers answered 401")
                .contains("result: FAIL (the router could not be read)");

        // The broker dies: its subscriptions wait for a covering broker, and step 1 fails naming them.
        broker.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        // What the kubelet would report of its Pod meanwhile: restarted, not ready yet.
        admin.pods().inNamespace(K8S_NS).withName("continuum-event-broker-a-0").editStatus(pod -> new PodBuilder(pod)
                .editStatus().editFirstCondition().withStatus("False").endCondition()
                .editFirstContainerStatus().withReady(false).withRestartCount(1).endContainerStatus().endStatus()
                .build());
        awaitSubscriptions("pending");
        Run down = start(TOKEN_ENV, "--window", "3").finish();
        assertThat(down.exit).as(down.output).isEqualTo(1);
        assertThat(down.output).contains("step 1 (brokers reach the bus): FAIL")
                .contains("; broker Pods not all Running and Ready")
                .contains("problem: pod continuum-event-broker-a-0: phase Running, not ready, restarts 1")
                .contains("problem: subscription kv_metrics publisher")
                .contains("state pending, transport broker")
                .contains("problem: namespace dynamo is not covered by any live broker session")
                .contains("problem: subscription kv-events publisher")
                .contains("namespace dynamo: not covered, " + SUBSCRIPTIONS + " pending")
                .contains("step 2: SKIP (step 1 failed)").contains("result: FAIL (step 1)")
                .doesNotContain("step 2 (samples stay fresh)").doesNotContain(ADMIN_TOKEN);
    }

    private record Run(int exit, String output) {
    }

    private static final Map<String, String> TOKEN_ENV = Map.of("ROUTER_ADMIN_TOKEN", ADMIN_TOKEN);

    /** A running script; its output goes to a file, so nothing blocks on a full pipe. */
    private record Started(Process process, Path output) {
        Run finish() throws Exception {
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            return new Run(process.exitValue(), Files.readString(output));
        }
    }

    /** Starts the operator script with bash, against the router and (through a kubeconfig) the mock API server. */
    private Started start(Map<String, String> env, String... args) throws Exception {
        Path kubeconfig = dir.resolve("kubeconfig");
        if (!Files.exists(kubeconfig)) {
            Files.writeString(kubeconfig, """
                    apiVersion: v1
                    kind: Config
                    clusters: [{name: mock, cluster: {server: "%s"}}]
                    users: [{name: mock, user: {token: "mock"}}]
                    contexts: [{name: mock, context: {cluster: mock, user: mock}}]
                    current-context: mock
                    """.formatted(masterUrl()));
        }
        List<String> command = new ArrayList<>(List.of("bash",
                DeployFiles.repositoryRoot().resolve("scripts/dynamo-broker-live-check.sh").toString(),
                "--router-url", "http://127.0.0.1:" + port, "--context", "mock", "--namespace", K8S_NS));
        command.addAll(List.of(args));
        Path output = Files.createTempFile(dir, "live-check-", ".out");
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().remove("ROUTER_ADMIN_TOKEN");
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        builder.environment().putAll(env);
        return new Started(builder.start(), output);
    }

    static boolean bus(String name) {
        return BUS_PREFIXES.stream().anyMatch(name::startsWith);
    }

    private void awaitSubscriptions(String state) throws IOException {
        try {
            // The router's JVM may still be starting: connection refusals are retried until the deadline.
            await().atMost(Duration.ofSeconds(60)).ignoreExceptionsInstanceOf(IOException.class).untilAsserted(() -> {
                HttpResponse<String> r = get("/admin/dynamo/workers");
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                JsonNode subscriptions = JSON.readTree(r.body()).get("subscriptions");
                assertThat(subscriptions).as(r.body()).hasSize(SUBSCRIPTIONS);
                subscriptions.forEach(s -> assertThat(s.get("state").asText()).as(r.body()).isEqualTo(state));
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // The children's logs go with the temporary directory: keep them in the failure.
            throw new AssertionError(e.getMessage() + "\n--- router.log\n" + tail("router.log")
                    + "\n--- broker-a.log\n" + tail("broker-a.log"), e);
        }
    }

    private String tail(String log) throws IOException {
        Path file = dir.resolve(log);
        if (!Files.exists(file)) {
            return "(none)";
        }
        String text = Files.readString(file);
        return text.substring(Math.max(0, text.length() - 4000));
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(uri(path)).header("authorization", "Bearer " + ADMIN_TOKEN)
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private Process startRouter() throws IOException {
        Path config = dir.resolve("router.yaml");
        Files.writeString(config, """
                server:
                  bind_address: "127.0.0.1:%d"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: frontend, url: "%s", models: ["%s"]}
                disaggregated_serving: {enabled: true}
                health_checks: {enabled: false}
                admin:
                  auth: {method: bearer_token, token: "%s"}
                dynamo:
                  enabled: true
                  discovery:
                    source: kubernetes
                    kubernetes:
                      namespace: %s
                      dynamo_namespace: %s
                      watch_reconnect_backoff: {initial: 50ms, max: 500ms}
                  load:
                    transport: broker
                  shim:
                    backends: [frontend]
                  kv:
                    enabled: true
                  event_bus:
                    enabled: true
                    listen: "127.0.0.1:%d"
                    tls: {cert: "%s", key: "%s"}
                    brokers:
                      - {id: broker-a.dynamo, client_id: broker-a, token_hash: "%s", namespaces: [dynamo]}
                """.formatted(port, shim.baseUrl(), MODEL, ADMIN_TOKEN, K8S_NS, DYN, busPort, certs.serverCert(),
                certs.serverKey(), TokenHash.of(BROKER_TOKEN)));
        return child("router", List.of("--config", config.toString()));
    }

    private Process startBroker(String name) throws IOException {
        Path tokenFile = dir.resolve(name + ".token");
        Files.writeString(tokenFile, BROKER_TOKEN + "\n");
        Path config = dir.resolve(name + ".yaml");
        Files.writeString(config, "bus:\n"
                + "  url: \"https://127.0.0.1:" + busPort + "\"\n"
                + "  client_id: broker-a\n"
                + "  token_file: \"" + tokenFile + "\"\n"
                + "  tls: {ca: \"" + certs.caCert() + "\"}\n"
                + "discovery:\n  source: kubernetes\n"
                + "  kubernetes: {namespace: " + K8S_NS + ", dynamo_namespace: " + DYN
                + ", watch_reconnect_backoff: {initial: 50ms, max: 500ms}}\n");
        return child(name, List.of("event-broker", "--config", config.toString()));
    }

    /** A child JVM running {@link Main}, its Kubernetes client pointed at the mock API server only. */
    private Process child(String name, List<String> args) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Dkubernetes.master=" + masterUrl(),
                "-Dkubernetes.auth.tryKubeConfig=false", "-Dkubernetes.auth.tryServiceAccount=false",
                "-Dkubernetes.trust.certificates=true",
                "-cp", System.getProperty("java.class.path"), Main.class.getName()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile());
        builder.environment().remove("KUBERNETES_SERVICE_HOST");
        builder.environment().remove("KUBECONFIG");
        return builder.start();
    }

    private String masterUrl() {
        return k8s.url("/");
    }

    private void createBrokerPod(String name) {
        Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(K8S_NS)
                .addToLabels("app.kubernetes.io/name", "continuum-event-broker").endMetadata()
                .withNewSpec().addNewContainer().withName("event-broker").withImage("continuum-router").endContainer()
                .endSpec()
                .withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True")
                .endCondition().addNewContainerStatus().withName("event-broker").withReady(true).withRestartCount(0)
                .endContainerStatus().endStatus().build();
        admin.pods().inNamespace(K8S_NS).resource(pod).create();
    }
}
