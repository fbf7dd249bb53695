package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.http.HttpServer;
import dev.continuum.router.proxy.ingress.Ingresses;
import dev.continuum.router.proxy.ingress.anthropic.EstimatedTokens;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.config.DiscoverySection;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shim path over real sockets: router, direct-mode shim emulators, and a plain backend for fallback. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShimDispatchTest {
    /** Above Long.MAX_VALUE as unsigned: its decimal spelling must not go negative. */
    private static final long DECODE_ID = 0x8000_0000_0000_002AL;
    private static final long PREFILL_ID = 0x1a7f2bL;
    private static final long AGG_ID = 77;

    private final ScriptedLoad load = new ScriptedLoad();
    private final AtomicReference<DynamoSnapshot> fleet = new AtomicReference<>(DynamoSnapshot.disabled(0));
    private final DirectModeShim shimA = DirectModeShim.start();
    private final DirectModeShim shimB = DirectModeShim.start();
    private final TestUpstream plain = TestUpstream.start("plain").defaultReply(Reply.echo());
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final AtomicReference<ShimConfig> currentShim = new AtomicReference<>();
    private PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** The picker of the last {@code start}, for its active sequences. */
    private final AtomicReference<LoadBasedPicker> picker = new AtomicReference<>();
    /** What the dispatcher sees of the fleet on each ask (the fleet as set, unless a test says otherwise). */
    private Supplier<DynamoSnapshot> snapshots = fleet::get;
    /** Whether the router binds the converting ingresses ({@code /v1/messages}, {@code /v1/responses}). */
    private boolean ingresses;
    private HttpServer server;
    private int port;

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.stop().join();
        }
        shimA.close();
        shimB.close();
        plain.close();
    }

    private void start(String dynamoYaml, String backendsYaml, boolean fallback) {
        String yaml = """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: false}
                retry: {enabled: true, max_attempts: 3, backoff: 0s}
                disaggregated_serving: {enabled: true, fallback_to_unified: %s}
                backends:
                %s
                dynamo:
                  enabled: true
                %s
                """.formatted(fallback, backendsYaml, dynamoYaml);
        ShimSection section = new ShimSection();
        RouterConfig config = ConfigLoader.builder().environment(Map.of())
                .dynamoSection(DiscoverySection.create(Map.of())).dynamoSection(section).build()
                .loadString(yaml).orThrow();
        HttpServer.Builder builder = HttpServer.builder(config, registry).shutdownGrace(Duration.ofMillis(300));
        if (ingresses) {
            builder.proxyOptions(Ingresses.standard(ProxyOptions.defaults(), new EstimatedTokens()));
        }
        server = builder.build();
        server.start().join();
        port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
        Supplier<DynamoSnapshot> seen = () -> snapshots.get();
        currentShim.set(config.dynamo().section(section));
        LoadBasedPicker loadBased = (LoadBasedPicker) DynamoWorkerPicker.loadBased(load, load, registry);
        picker.set(loadBased);
        ShimDispatcher dispatcher = ShimDispatcher.create(seen, () -> config.dynamo().section(section), loadBased,
                registry);
        server.proxy().dispatchHook(dispatcher);
    }

    private void startSingle(boolean fallback) {
        start("""
                  discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                  shim: {backends: [shim-a, shim-b], model_map: {alias: "%s"}}
                """.formatted(MODEL), """
                  - {name: shim-a, url: "%s", models: [%s, alias]}
                  - {name: shim-b, url: "%s", models: [%s, alias]}
                  - {name: plain, url: "%s", models: [%s, alias]}
                """.formatted(shimA.baseUrl(), MODEL, shimB.baseUrl(), MODEL, plain.baseUrl(), MODEL), fallback);
    }

    private void fleet(DynamoWorker... workers) {
        List<String> namespaces = List.of(workers).stream().map(DynamoWorker::namespace).distinct().sorted().toList();
        fleet.set(new DynamoSnapshot(true, DiscoverySourceKind.ETCD, namespaces.isEmpty() ? List.of("dynamo")
                : namespaces, 1, true, FleetView.of(List.of(workers), List.of())));
    }

    private HttpResponse<String> chat(String model, boolean stream, String... headers) {
        String body = "{\"model\":\"" + model + "\",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the fleet, please.\"}]}";
        return post("/v1/chat/completions", body, headers);
    }

    private HttpResponse<String> post(String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json");
        if (headers.length > 0) {
            b.headers(headers);
        }
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private List<DirectModeShim.Seen> allSeen() {
        return java.util.stream.Stream.concat(shimA.seen().stream(), shimB.seen().stream()).toList();
    }

    private double counter(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).counter().count();
    }

    private void disaggregatedFleet() {
        fleet(worker("dynamo", DECODE_ID, DECODE, MODEL, 0, 1), worker("dynamo", PREFILL_ID, PREFILL));
        for (DirectModeShim s : List.of(shimA, shimB)) {
            s.decode(DECODE_ID).prefill(PREFILL_ID);
        }
    }

    @Test
    void writesDecimalPinsAndRankHeadersAndStripsTheClientsOwnPins() {
        startSingle(true);
        disaggregatedFleet();

        HttpResponse<String> r = chat("alias", false, "x-dynamo-worker-instance-id", "1",
                "X-Dynamo-Prefill-Instance-Id", "2", "x-worker-instance-id", "3", "x-dp-rank", "4",
                "x-tenant-id", "t1");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(allSeen()).hasSize(1);
        DirectModeShim.Seen seen = allSeen().get(0);
        assertThat(seen.header("x-dynamo-worker-instance-id")).isEqualTo(Long.toUnsignedString(DECODE_ID))
                .isEqualTo("9223372036854775850");
        assertThat(seen.header("x-dynamo-prefill-instance-id")).isEqualTo("1736491");
        assertThat(seen.header("x-dynamo-dp-rank")).isEqualTo("0"); // data_parallel_size declared (1)
        assertThat(seen.header("x-dynamo-prefill-dp-rank")).isNull(); // not declared
        assertThat(seen.headers()).doesNotContainKeys("x-worker-instance-id", "x-dp-rank")
                .containsEntry("x-tenant-id", "t1");
        assertThat(seen.body()).contains("\"model\":\"alias\""); // the client's model ID goes upstream
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
        assertThat(r.headers().map().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"))
                .doesNotContain("x-continuum-backend", "x-continuum-worker-instance-id");
        // Counted when the relay ends, which may be just after the client read the last byte.
        await().untilAsserted(() -> assertThat(counter("disaggregated.requests", "routing_path",
                "prefill_then_decode")).isEqualTo(1));
        assertThat(registry.get(SelectionMetrics.SELECTIONS).tag("role", "decode").tag("reason", "round_robin_stale")
                .counter().count()).isEqualTo(1);
        assertThat(plain.completionCount()).isZero();
    }

    @Test
    void aConditionalBypassPinsTheDecodeWorkerAloneByInstanceIdAndRoutesUnified() {
        startSingle(true);
        // A prefill worker is registered, but the frontend emulators are told only of the decode worker: they
        // serve a decode-only pin as a frontend that accepts conditional disaggregation does.
        DynamoWorker decode = worker("dynamo", DECODE_ID, DECODE, MODEL, 0, 2);
        DynamoWorker prefill = worker("dynamo", PREFILL_ID, PREFILL);
        var events = new dev.continuum.router.discovery.DynamoPublisher(
                new dev.continuum.router.discovery.PublisherId("dynamo", 5),
                dev.continuum.router.discovery.PublisherTopic.KV_EVENTS, "decode", null, "tcp://127.0.0.1:5557");
        fleet.set(new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("dynamo"), 1, true,
                FleetView.of(List.of(decode, prefill), List.of(events))));
        for (DirectModeShim s : List.of(shimA, shimB)) {
            s.decode(DECODE_ID);
        }
        FixedOverlap index = new FixedOverlap().hold(DECODE_ID, 0, 4).hold(DECODE_ID, 1, 4);
        LoadBasedPicker loadPicker = new LoadBasedPicker(load, load, new SelectionMetrics(registry));
        KvAwarePicker kv = new KvAwarePicker(loadPicker, index,
                () -> new KvPickerSettings(1.0, 1.0, 0, true, null), new KvSelectionMetrics(registry), () -> 0.5);
        ShimDispatcher dispatcher = ShimDispatcher.create(fleet::get, () -> currentShim.get(), kv, registry);
        PromptBlocks prompt = new PromptBlocks(64, List.of(new BlockHashes(16, new long[] {1, 2, 3, 4})));
        server.proxy().dispatchHook(request -> dispatcher.plan(request, prompt));

        HttpResponse<String> r = chat(MODEL, false, "x-backend", "");

        assertThat(r.statusCode()).isEqualTo(200);
        DirectModeShim.Seen seen = allSeen().get(0);
        assertThat(seen.header("x-dynamo-worker-instance-id")).isEqualTo("9223372036854775850");
        assertThat(seen.headers().keySet()).filteredOn(h -> h.startsWith("x-dynamo-"))
                .containsExactly("x-dynamo-worker-instance-id");
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        assertThat(r.headers().firstValue("x-continuum-prefill-instance-id")).isEmpty();
        assertThat(registry.get(KvSelectionMetrics.NAME).tag("result", "bypass").counter().count()).isEqualTo(1);
        assertThat(registry.get(SelectionMetrics.SELECTIONS).tag("role", "prefill")
                .tag("reason", "conditional_bypass").counter().count()).isEqualTo(1);
    }

    @Test
    void disclosesBackendAndWorkersOnlyUnderXBackendEvenBlank() {
        startSingle(true);
        disaggregatedFleet();

        HttpResponse<String> r = chat(MODEL, false, "x-backend", "");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-continuum-backend")).hasValueSatisfying(
                v -> assertThat(v).isIn("shim-a", "shim-b"));
        assertThat(r.headers().firstValue("x-continuum-worker-instance-id")).hasValue("9223372036854775850");
        assertThat(r.headers().firstValue("x-continuum-prefill-instance-id")).hasValue("1736491");
    }

    @Test
    void relaysTheShimsSseStream() {
        startSingle(true);
        disaggregatedFleet();

        HttpResponse<String> r = chat(MODEL, true);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(
                v -> assertThat(v).startsWith("text/event-stream"));
        assertThat(r.body()).contains("\"Hel\"", "\"lo\"", "data: [DONE]");
        assertThat(allSeen().get(0).header("x-dynamo-prefill-instance-id")).isEqualTo("1736491");
    }

    @Test
    void anAggregatedWorkerIsPinnedAloneOnTheUnifiedPath() {
        startSingle(true);
        fleet(worker("dynamo", AGG_ID, AGGREGATED));
        shimA.decode(AGG_ID);
        shimB.decode(AGG_ID);

        HttpResponse<String> r = chat(MODEL, false);

        assertThat(r.statusCode()).isEqualTo(200);
        DirectModeShim.Seen seen = allSeen().get(0);
        assertThat(seen.header("x-dynamo-worker-instance-id")).isEqualTo("77");
        assertThat(seen.header("x-dynamo-prefill-instance-id")).isNull();
        assertThat(seen.header("x-dynamo-dp-rank")).isNull();
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
    }

    @Test
    void thePrefillRefusalBecomes503WithoutRetry() {
        startSingle(true);
        // The frontend knows a prefill worker the router's view does not pair (aggregated winner).
        fleet(worker("dynamo", AGG_ID, AGGREGATED));
        for (DirectModeShim s : List.of(shimA, shimB)) {
            s.decode(AGG_ID).prefill(PREFILL_ID).refusalStatus(503);
        }

        HttpResponse<String> r = chat(MODEL, false);

        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("disaggregated_prefill_decode_unavailable");
        assertThat(allSeen()).hasSize(1); // not retried on the other replica, 503 notwithstanding
        assertThat(plain.completionCount()).isZero(); // and no fallback
        assertThat(counter("disaggregated.errors", "phase", "orchestration")).isEqualTo(1);
        assertThat(counter("disaggregated.errors", "phase", "decode")).isZero();
    }

    @Test
    void aDownShimReplicaIsRetriedOnAnotherWithTheSamePins() {
        int closed = FreePorts.next();
        start("""
                  discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                  shim: {backends: [shim-down, shim-b]}
                """, """
                  - {name: shim-down, url: "http://127.0.0.1:%d", models: [%s]}
                  - {name: shim-b, url: "%s", models: [%s]}
                """.formatted(closed, MODEL, shimB.baseUrl(), MODEL), true);
        disaggregatedFleet();

        for (int i = 0; i < 2; i++) {
            HttpResponse<String> r = chat(MODEL, false);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
        }
        assertThat(shimB.seen()).hasSize(2).allSatisfy(s -> {
            assertThat(s.header("x-dynamo-worker-instance-id")).isEqualTo("9223372036854775850");
            assertThat(s.header("x-dynamo-prefill-instance-id")).isEqualTo("1736491");
        });
        // One selection per request, whatever the retries.
        assertThat(registry.get(SelectionMetrics.SELECTIONS).tag("role", "decode").counters().stream()
                .mapToDouble(c -> c.count()).sum()).isEqualTo(2);
    }

    @Test
    void aDecodeFailureFallsBackToUnifiedRoutingWithoutPins() {
        startSingle(true);
        disaggregatedFleet();
        shimA.force(500, "{\"error\":{\"message\":\"engine exploded\"}}");
        shimB.force(500, "{\"error\":{\"message\":\"engine exploded\"}}");

        HttpResponse<String> r = chat(MODEL, false, "x-backend", "x");

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
        assertThat(r.headers().firstValue("x-continuum-backend")).hasValue("plain");
        assertThat(r.headers().firstValue("x-continuum-worker-instance-id")).isEmpty();
        List<RecordedRequest> fallback = plain.completionRequests();
        assertThat(fallback).hasSize(1);
        assertThat(fallback.get(0).headers().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"));
        assertThat(counter("disaggregated.errors", "phase", "decode")).isEqualTo(1);
        assertThat(counter("disaggregated.requests", "routing_path", "fallback")).isEqualTo(1);
    }

    @Test
    void withoutFallbackADecodeFailureIsDisaggregatedDecodeFailed() {
        startSingle(false);
        disaggregatedFleet();
        shimA.force(500, "{}");
        shimB.force(500, "{}");

        HttpResponse<String> r = chat(MODEL, false);

        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(r.body()).contains("disaggregated_decode_failed");
        assertThat(plain.completionCount()).isZero();
    }

    @Test
    void onAStreamAnOrdinary4xxIsRelayedNotFallenBack() {
        startSingle(true);
        disaggregatedFleet();
        shimA.force(400, "{\"error\":{\"message\":\"bad temperature\"}}");
        shimB.force(400, "{\"error\":{\"message\":\"bad temperature\"}}");

        HttpResponse<String> r = chat(MODEL, true);

        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.body()).contains("bad temperature");
        assertThat(r.headers().map().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"));
        assertThat(plain.completionCount()).isZero();
    }

    @Test
    void onAStreamA429FallsBack() {
        startSingle(true);
        disaggregatedFleet();
        shimA.force(429, "{}");
        shimB.force(429, "{}");

        HttpResponse<String> r = chat(MODEL, true);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
        assertThat(plain.completionCount()).isEqualTo(1);
    }

    @Test
    void severalNamespacesDispatchToTheWinningGraphsOwnPool() {
        start("""
                  discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"], namespaces: [prod, canary]}}
                  shim: {pools: [{namespace: prod, backends: [shim-a]}, {namespace: canary, backends: [shim-b]}]}
                """, """
                  - {name: shim-a, url: "%s", models: [%s]}
                  - {name: shim-b, url: "%s", models: [%s]}
                """.formatted(shimA.baseUrl(), MODEL, shimB.baseUrl(), MODEL), true);
        fleet(worker("prod", 1, DECODE), worker("prod", 2, PREFILL), worker("canary", 1, DECODE),
                worker("canary", 3, PREFILL));
        shimA.decode(1).prefill(2);
        shimB.decode(1).prefill(3);
        load.sample(new WorkerId("prod", 1), 0, 500L, null);
        load.sample(new WorkerId("canary", 1), 0, 5L, null);

        HttpResponse<String> r = chat(MODEL, false);

        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(shimA.seen()).isEmpty();
        assertThat(shimB.seen()).singleElement().satisfies(s -> {
            assertThat(s.header("x-dynamo-worker-instance-id")).isEqualTo("1");
            assertThat(s.header("x-dynamo-prefill-instance-id")).isEqualTo("3");
        });
    }

    @Test
    void aModelNoWorkerServesTakesStandardRoutingWithoutPins() {
        startSingle(true);
        fleet(worker("dynamo", AGG_ID, AGGREGATED, "another-model", null, null));

        HttpResponse<String> r = chat(MODEL, false, "x-dynamo-worker-instance-id", "77");

        assertThat(r.statusCode()).isIn(200, 404, 500); // a shim replica given no pin refuses, as upstream does
        assertThat(allSeen()).allSatisfy(s -> assertThat(s.headers().keySet())
                .noneMatch(h -> h.startsWith("x-dynamo-")));
        assertThat(plain.completionRequests()).allSatisfy(s -> assertThat(s.headers().keySet())
                .noneMatch(h -> h.startsWith("x-dynamo-")));
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        assertThat(counter("disaggregated.requests", "routing_path", "unified")).isEqualTo(1);
    }

    @Test
    void aRetryBehindAConvertingIngressThatGetsNoPlanIsCountedOnce() {
        // The first ask sees the fleet; the retry's ask (narrowed to its replica) finds nothing to pin.
        AtomicInteger asks = new AtomicInteger();
        snapshots = () -> asks.getAndIncrement() == 0 ? fleet.get() : DynamoSnapshot.disabled(0);
        ingresses = true;
        startSingle(true);
        disaggregatedFleet();
        shimA.force(503, "{\"error\":{\"message\":\"busy\"}}");
        shimB.force(503, "{\"error\":{\"message\":\"busy\"}}");

        HttpResponse<String> r = post("/v1/messages", "{\"model\":\"" + MODEL + "\",\"max_tokens\":8,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the fleet, please.\"}]}");

        // Pinned send, 503, a retry on the other replica without a pin = the plan's path failed: unified fallback.
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
        assertThat(asks.get()).isEqualTo(2);
        assertThat(allSeen()).hasSize(1);
        assertThat(plain.completionRequests()).hasSize(1);
        assertThat(counter("disaggregated.requests", "routing_path", "fallback")).isEqualTo(1);
        assertThat(counter("disaggregated.requests", "routing_path", "unified")).as("the resend is not a request").isZero();
        assertThat(counter("disaggregated.requests", "routing_path", "prefill_then_decode")).isZero();
    }

    @Test
    void theRefusalIsRecognizedOnAnyStatusAndOnStreams() {
        startSingle(true);
        fleet(worker("dynamo", AGG_ID, AGGREGATED));
        for (DirectModeShim s : List.of(shimA, shimB)) {
            s.decode(AGG_ID).prefill(PREFILL_ID).refusalStatus(400);
        }

        HttpResponse<String> buffered = chat(MODEL, false);
        HttpResponse<String> stream = chat(MODEL, true);

        for (HttpResponse<String> r : List.of(buffered, stream)) {
            assertThat(r.statusCode()).isEqualTo(503);
            assertThat(r.body()).contains("disaggregated_prefill_decode_unavailable");
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
        }
        assertThat(allSeen()).hasSize(2);
        assertThat(plain.completionCount()).isZero();
        assertThat(counter("disaggregated.errors", "phase", "orchestration")).isEqualTo(2);
    }

    @Test
    void aShimThatTimesOutFallsBackToUnifiedRouting() {
        TestUpstream slowShim = TestUpstream.start("slow").defaultReply(Reply.delayed(Duration.ofSeconds(5),
                Reply.echo()));
        try {
            start("""
                      discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                      shim: {backends: [shim-slow]}
                    """, """
                      - {name: shim-slow, url: "%s", models: [%s], timeout: 300ms}
                      - {name: plain, url: "%s", models: [%s]}
                    """.formatted(slowShim.baseUrl(), MODEL, plain.baseUrl(), MODEL), true);
            disaggregatedFleet();

            HttpResponse<String> r = chat(MODEL, false);

            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
            assertThat(slowShim.completionRequests()).singleElement().satisfies(q ->
                    assertThat(q.header("x-dynamo-worker-instance-id")).isEqualTo("9223372036854775850"));
            assertThat(plain.completionRequests()).singleElement().satisfies(q ->
                    assertThat(q.headers().keySet()).noneMatch(h -> h.startsWith("x-dynamo-")));
        } finally {
            slowShim.close();
        }
    }

    @Test
    void theBodysNvextRoutingFieldsAreStrippedOnThePinnedPathToo() {
        startSingle(true);
        disaggregatedFleet();
        String body = "{\"model\":\"" + MODEL + "\",\"nvext\":{\"backend_instance_id\":1,"
                + "\"prefill_worker_id\":2,\"annotations\":[\"keep\"]},\"messages\":[{\"role\":\"user\","
                + "\"content\":\"hi\"}]}";
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .timeout(Duration.ofSeconds(20)).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json").build();
        try {
            assertThat(http.send(req, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
        DirectModeShim.Seen seen = allSeen().get(0);
        assertThat(seen.body()).doesNotContain("backend_instance_id", "prefill_worker_id").contains("keep");
        assertThat(seen.header("x-dynamo-prefill-instance-id")).isEqualTo("1736491");
    }

    @Test
    void aWorkerWithAnUnansweredRequestForFiveSecondsIsAvoided() throws Exception {
        TestUpstream shim = TestUpstream.start("shim").defaultReply(Reply.echo());
        try {
            start("""
                      discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                      shim: {backends: [shim-t]}
                    """, """
                      - {name: shim-t, url: "%s", models: [%s]}
                    """.formatted(shim.baseUrl(), MODEL), true);
            load.maxStaleness = Duration.ofMinutes(1);
            fleet(worker("dynamo", 1, AGGREGATED), worker("dynamo", 2, AGGREGATED));
            load.sample(new WorkerId("dynamo", 1), 0, 0L, null);
            load.sample(new WorkerId("dynamo", 2), 0, 100L, null);
            shim.enqueue(Reply.controlledStream());

            var inFlight = http.sendAsync(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"stream\":true,"
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"" + "word ".repeat(40) + "\"}]}"))
                    .header("content-type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
            var stream = shim.awaitStream(Duration.ofSeconds(10));
            assertThat(stream.request().header("x-dynamo-worker-instance-id")).isEqualTo("1");

            load.advance(Duration.ofSeconds(6)); // worker 1 left a 4-block request unanswered for 6 s
            assertThat(chat(MODEL, false).statusCode()).isEqualTo(200);
            assertThat(shim.completionRequests().get(1).header("x-dynamo-worker-instance-id")).isEqualTo("2");

            load.sample(new WorkerId("dynamo", 1), 0, 0L, null); // a sample ends the suspicion
            assertThat(chat(MODEL, false).statusCode()).isEqualTo(200);
            assertThat(shim.completionRequests().get(2).header("x-dynamo-worker-instance-id")).isEqualTo("1");

            stream.finish();
            assertThat(inFlight.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        } finally {
            shim.close();
        }
    }

    @Test
    void aBurstBetweenSamplesSpreadsByUnansweredDispatches() throws Exception {
        TestUpstream shim = TestUpstream.start("shim").defaultReply(Reply.echo());
        try {
            start("""
                      discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                      shim: {backends: [shim-t]}
                    """, """
                      - {name: shim-t, url: "%s", models: [%s]}
                    """.formatted(shim.baseUrl(), MODEL), true);
            fleet(worker("dynamo", 1, AGGREGATED), worker("dynamo", 2, AGGREGATED));
            load.sample(new WorkerId("dynamo", 1), 0, 6L, null);
            load.sample(new WorkerId("dynamo", 2), 0, 0L, null);

            // Eight requests held open (a burst no sample shows yet), each placed once the one before is.
            List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
            List<StreamHandle> streams = new ArrayList<>();
            java.util.Map<String, Long> perWorker = new java.util.TreeMap<>();
            for (int i = 0; i < 8; i++) {
                shim.enqueue(Reply.controlledStream());
                inFlight.add(http.sendAsync(HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"stream\":true,"
                                + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello to the fleet, "
                                + "please.\"}]}"))
                        .header("content-type", "application/json").build(), HttpResponse.BodyHandlers.ofString()));
                StreamHandle stream = shim.awaitStream(Duration.ofSeconds(10));
                streams.add(stream);
                perWorker.merge(stream.request().header("x-dynamo-worker-instance-id"), 1L, Long::sum);
            }

            // Each request is 1 block; worker 2 fills up to worker 1's 6 blocks, then they alternate.
            assertThat(perWorker).containsEntry("2", 7L).containsEntry("1", 1L);
            for (StreamHandle stream : streams) {
                stream.finish();
            }
            for (CompletableFuture<HttpResponse<String>> f : inFlight) {
                assertThat(f.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            }

            // Answered (ended) dispatches no longer count: the next request goes to the emptier worker again.
            await().atMost(Duration.ofSeconds(10)).until(() -> picker.get().sequences().liveSequences() == 0);
            shim.enqueue(Reply.echo());
            assertThat(chat(MODEL, false).statusCode()).isEqualTo(200);
            assertThat(shim.completionRequests().get(8).header("x-dynamo-worker-instance-id")).isEqualTo("2");
        } finally {
            shim.close();
        }
    }
}
