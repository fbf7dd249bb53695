package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.sim.DirectFrontend;
import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.Pool;
import dev.continuum.router.sim.SimFleet;
import dev.continuum.router.sim.SimWorker;
import dev.continuum.router.sim.Store;
import dev.continuum.router.testing.EtcdExtension;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The router process end to end against the simulated Dynamo fleet over real sockets: workers register in
 * Dynamo's file store, publish kv_metrics over ZMQ, and are served by the direct-mode frontend emulator, which
 * refuses any pin that is not a decimal ID of one of its own workers in the right role. So every 200 from the
 * emulator proves the router's pins were well-formed and named a real pair of the same graph.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PinnedFleetEndToEndTest {
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.plain();

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "Qwen/Qwen3-0.6B";
    private static final String PLAIN_MODEL = "plain-model";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private RouterProcess router;
    /** Added to the router's load clock (sample ages, stall timers) by tests of those timers. */
    private final AtomicLong clockOffsetNanos = new AtomicLong();

    @AfterEach
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    @Test
    void pinsAreDecimalPairsOfTheFleetAndClientPinsAreStrippedOnEveryIngress() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL));
        TestUpstream plain = upstream(TestUpstream.start("plain").models(PLAIN_MODEL).defaultReply(Reply.echo()));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL), backend("plain", plain.baseUrl(), PLAIN_MODEL)),
                "backends: [frontend]", "store", List.of("dynamo"), true, "");
        awaitSubscribed(4);

        // A client's own pins, in every spelling, must never reach a backend: the pinned path writes the
        // picker's instead, and every other route drops them.
        String[][] clientPins = {
            {"x-dynamo-worker-instance-id", "1"}, {"x-dynamo-prefill-instance-id", "2"},
            {"x-dynamo-dp-rank", "3"}, {"x-worker-instance-id", "4"}, {"x-prefill-instance-id", "5"},
        };
        String nvext = ",\"nvext\":{\"backend_instance_id\":1,\"prefill_worker_id\":2}";
        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, stream, nvext), clientPins)
                    .header("x-backend", "").build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            assertThat(role(fleet, disclosed(r, "x-continuum-worker-instance-id"))).isEqualTo(Role.DECODE);
            assertThat(role(fleet, disclosed(r, "x-continuum-prefill-instance-id"))).isEqualTo(Role.PREFILL);
            assertThat(r.headers().map().keySet()).noneMatch(h -> h.startsWith("x-dynamo-"));
            if (stream) {
                assertThat(r.body()).contains("data: [DONE]");
            }
        }
        assertThat(served(fleet, Role.PREFILL)).isEqualTo(2);
        assertThat(served(fleet, Role.DECODE)).isEqualTo(2);

        // Other routes and models: a plain backend sees none of the client's routing headers.
        send(post("/v1/chat/completions", chatBody(PLAIN_MODEL, false, nvext), clientPins).build());
        send(post("/v1/completions", "{\"model\":\"" + PLAIN_MODEL + "\",\"prompt\":\"hi\"" + nvext + "}",
                clientPins).build());
        send(get("/v1/models", clientPins));
        assertThat(plain.completionRequests()).hasSize(2);
        for (RecordedRequest q : plain.requests()) {
            assertThat(q.headers().keySet()).as(q.path()).noneMatch(h -> h.toLowerCase().startsWith("x-dynamo-")
                    || h.equalsIgnoreCase("x-worker-instance-id") || h.equalsIgnoreCase("x-prefill-instance-id"));
        }
        for (RecordedRequest q : plain.completionRequests()) {
            assertThat(q.body()).doesNotContain("backend_instance_id").doesNotContain("prefill_worker_id");
        }
    }

    @Test
    void anAggregatedFleetIsPinnedToOneWorkerWithoutAPrefillPin() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(0, 2));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", "store",
                List.of("dynamo"), false, "");
        awaitSubscribed(2);

        for (int i = 0; i < 4; i++) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, i % 2 == 0, ""))
                    .header("x-backend", "").build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("unified");
            assertThat(role(fleet, disclosed(r, "x-continuum-worker-instance-id"))).isEqualTo(Role.AGGREGATED);
            assertThat(r.headers().firstValue("x-continuum-prefill-instance-id")).isEmpty();
        }
        assertThat(served(fleet, Role.AGGREGATED)).isEqualTo(4);
        assertThat(selections("no_prefill_pool")).isEqualTo(4);
    }

    @Test
    void severalNamespacesEachSendPairsOfTheirOwnGraphToTheirOwnPool() throws Exception {
        Path store = dir.resolve("store");
        SimFleet prod = fleet(namespaced(store, "prod"));
        SimFleet canary = fleet(namespaced(store, "canary"));
        startRouter(List.of(backend("prod-frontend", prod.frontendUrl(), MODEL),
                        backend("canary-frontend", canary.frontendUrl(), MODEL)),
                "pools: [{namespace: prod, backends: [prod-frontend]}, {namespace: canary, backends: [canary-frontend]}]",
                "store", List.of("prod", "canary"), false, "");
        awaitSubscribed(4);

        // Concurrent streams: each adds to its worker's backlog, so the load-only picker spreads them over both
        // graphs; the emulators refuse any ID of the other graph, so a 200 proves the pair stayed together.
        List<HttpResponse<String>> answers = burst(12, MODEL);
        for (HttpResponse<String> r : answers) {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            long decode = disclosed(r, "x-continuum-worker-instance-id");
            long prefill = disclosed(r, "x-continuum-prefill-instance-id");
            SimFleet graph = owner(decode, prod, canary);
            assertThat(owner(prefill, prod, canary)).isSameAs(graph);
            assertThat(r.headers().firstValue("x-continuum-backend"))
                    .hasValue(graph == prod ? "prod-frontend" : "canary-frontend");
        }
        assertThat(served(prod, Role.DECODE) + served(canary, Role.DECODE)).isEqualTo(12);
        assertThat(served(prod, Role.DECODE)).isPositive();
        assertThat(served(canary, Role.DECODE)).isPositive();
    }

    @Test
    void theFrontendsPrefillRefusalIs503WithoutRetryOrFallback() throws Exception {
        // The router sees an aggregated fleet; the frontend also has a prefill pool the router cannot see (for
        // example one registered in a namespace it does not watch), so it refuses a decode pin without prefill.
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(0, 1));
        List<DirectFrontend.Worker> known = new ArrayList<>(fleet.workers().stream()
                .map(w -> new DirectFrontend.Worker(w.instanceId(), w.role(), 1)).toList());
        known.add(new DirectFrontend.Worker(42L, Role.PREFILL, 1));
        fleet.frontend().workers(known);
        TestUpstream plain = upstream(TestUpstream.start("plain").models(MODEL).defaultReply(Reply.echo()));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL), backend("plain", plain.baseUrl(), MODEL)),
                "backends: [frontend]", "store", List.of("dynamo"), true, "");
        awaitSubscribed(1);

        HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, false, "")).build());

        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("disaggregated_prefill_decode_unavailable");
        assertThat(plain.completionCount()).isZero();
        assertThat(metric("disaggregated_errors_total", "phase=\"orchestration\"")).isEqualTo(1);
    }

    @Test
    void aDownShimReplicaIsRetriedOnAnotherReplicaWithTheSamePins() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL));
        int closedPort = FreePorts.next();
        startRouter(List.of(backend("replica-down", URI.create("http://127.0.0.1:" + closedPort), MODEL),
                        backend("replica-up", fleet.frontendUrl(), MODEL)),
                "backends: [replica-down, replica-up]", "store", List.of("dynamo"), false, "");
        awaitSubscribed(4);

        for (int i = 0; i < 4; i++) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, i % 2 == 1, ""))
                    .header("x-backend", "").build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            assertThat(r.headers().firstValue("x-continuum-backend")).hasValue("replica-up");
        }
        // Round robin sent some first attempts to the dead replica; each was retried with its pins (the
        // emulator served exactly one prefill and one decode pin per request, and one selection was made each).
        assertThat(served(fleet, Role.DECODE)).isEqualTo(4);
        assertThat(served(fleet, Role.PREFILL)).isEqualTo(4);
        assertThat(selections(null, "decode")).isEqualTo(4);
        assertThat(metric("continuum_retries_total", "")).isPositive();
    }

    @Test
    void aFailingShimFallsBackToUnifiedRoutingWithoutPins() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL));
        TestUpstream broken = upstream(TestUpstream.start("broken").models(MODEL)
                .defaultReply(Reply.status(500, "{\"error\":{\"message\":\"engine exploded\"}}")));
        TestUpstream plain = upstream(TestUpstream.start("plain").models(MODEL).defaultReply(Reply.echo()));
        startRouter(List.of(backend("shim", broken.baseUrl(), MODEL), backend("plain", plain.baseUrl(), MODEL)),
                "backends: [shim]", "store", List.of("dynamo"), true, "");
        awaitSubscribed(4);

        for (boolean stream : List.of(false, true)) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, stream, ""))
                    .header("x-backend", "").build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("fallback");
            assertThat(r.headers().firstValue("x-continuum-backend")).hasValue("plain");
        }
        // The shim got the pins; the fallback got none.
        assertThat(broken.completionRequests()).isNotEmpty().allSatisfy(q ->
                assertThat(q.header("x-dynamo-worker-instance-id")).isNotNull());
        assertThat(plain.completionRequests()).hasSize(2).allSatisfy(q ->
                assertThat(q.headers().keySet()).noneMatch(h -> h.toLowerCase().startsWith("x-dynamo-")));
        assertThat(metric("disaggregated_errors_total", "phase=\"decode\"")).isEqualTo(2);
        assertThat(metric("disaggregated_requests_total", "routing_path=\"fallback\"")).isEqualTo(2);
    }

    @Test
    void aBurstIsSpreadByLoadSoNoDecodeWorkerTakesMoreThanItsShare() throws Exception {
        // Streams of 2 s: the whole burst is in flight at once even on a slow machine.
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(2, 4)
                .withFrontend("127.0.0.1", 0, 40, 50));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", "store",
                List.of("dynamo"), false, "");
        awaitSubscribed(6);

        // The decode workers' samples pause while the burst is dispatched: a sample published between a
        // dispatch and its arrival at the worker answers that dispatch without showing it (the race the
        // ledger accepts by design), and on a loaded machine a burst can span several samples. Without
        // them, what spreads the burst is the ledger's count of unanswered dispatches alone.
        List<SimWorker> decode = fleet.workers().stream().filter(w -> w.role() == Role.DECODE).toList();
        decode.forEach(SimWorker::silence);
        List<CompletableFuture<HttpResponse<String>>> pending = burstAsync(16, MODEL);
        await().atMost(Duration.ofSeconds(30)).until(() ->
                decode.stream().mapToLong(w -> fleet.frontend().served(w.instanceId())).sum() == 16);
        decode.forEach(SimWorker::unsilence);
        List<HttpResponse<String>> answers = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> p : pending) {
            answers.add(p.get(60, TimeUnit.SECONDS));
        }

        assertThat(answers).allSatisfy(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200));
        // 16 concurrent streams over 4 decode workers: each dispatch counts on its worker until a sample
        // shows it, so none takes more than its share of 4 (plus one for a sample racing the pause).
        for (SimWorker w : fleet.workers()) {
            if (w.role() == Role.DECODE) {
                assertThat(fleet.frontend().served(w.instanceId())).as(w.component()).isBetween(1L, 5L);
            }
        }
    }

    @Test
    void aStalledSilentWorkerIsAvoidedUntilItAnswersAgain() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL).withWorkers(0, 2));
        // Samples stay fresh for a minute, so only the stall rule (not staleness) can set the worker aside.
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", "store",
                List.of("dynamo"), false, "max_staleness: 1m");
        awaitSubscribed(2);
        SimWorker stuck = fleet.worker(0);
        SimWorker healthy = fleet.worker(1);
        stuck.silence();
        stuck.stall();
        // A sample already on its way would answer the dispatch below. Wait until the router has applied five more
        // rounds of the healthy worker's samples: a sample the stuck worker sent before its silence has landed by then.
        awaitHealthySampleRounds(healthy, 5);

        // Two concurrent streams at equal load: the first one's backlog sends the second to the other worker, so
        // one of them waits on the stalled worker, unanswered, and no sample comes from it. The stall rule
        // (docs/request-path.md, "Stall") concerns requests of two or more KV blocks: these prompts are 40 words (3
        // blocks of 16 tokens).
        String longPrompt = "{\"model\":\"" + MODEL + "\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\""
                + "word ".repeat(40) + "\"}]}";
        List<CompletableFuture<HttpResponse<String>>> pair = List.of(
                client.sendAsync(post("/v1/chat/completions", longPrompt).build(), HttpResponse.BodyHandlers.ofString()),
                client.sendAsync(post("/v1/chat/completions", longPrompt).build(), HttpResponse.BodyHandlers.ofString()));
        await().atMost(Duration.ofSeconds(30)).until(() -> stuck.inFlight() == 1);
        // The rule is about time: a dispatch unanswered for 5 s with no sample since. Until then the stalled
        // worker's backlog alone weighs against it; after it, it loses to any live worker whatever that worker's
        // load. The router's load clock is moved past the 5 s instead of waiting for them.
        // The healthy worker's own dispatch must be answered first (its next samples), or it would look stalled too.
        awaitHealthySampleRounds(healthy, 2);
        clockOffsetNanos.addAndGet(Duration.ofMillis(5_500).toNanos());

        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, false, ""))
                    .header("x-backend", "").timeout(Duration.ofSeconds(20)).build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(disclosed(r, "x-continuum-worker-instance-id")).isEqualTo(healthy.instanceId());
        }

        // It answers again: the parked stream completes, and the worker is back among the candidates.
        stuck.resume();
        stuck.unsilence();
        for (CompletableFuture<HttpResponse<String>> f : pair) {
            assertThat(f.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        long servedBefore = fleet.frontend().served(stuck.instanceId());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, false, "")).build());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(fleet.frontend().served(stuck.instanceId())).isGreaterThan(servedBefore);
        });
    }

    @Test
    void aggregatedWorkersBesideAPrefillDecodePoolAreNeverDecodeCandidates() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL)
                .withFrontend("127.0.0.1", 0, 40, 50)
                .withPools(List.of(Pool.of("dynamo", MODEL, Role.PREFILL, 1), Pool.of("dynamo", MODEL, Role.DECODE, 2),
                        Pool.of("dynamo", MODEL, Role.AGGREGATED, 2))));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", "store",
                List.of("dynamo"), false, "");
        awaitSubscribed(5);

        for (HttpResponse<String> r : burst(8, MODEL)) {
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
            assertThat(role(fleet, disclosed(r, "x-continuum-worker-instance-id"))).isEqualTo(Role.DECODE);
        }
        assertThat(served(fleet, Role.AGGREGATED)).isZero();
        assertThat(served(fleet, Role.DECODE)).isEqualTo(8);
    }

    @Test
    void dataParallelRanksArePinnedAndLoadSpreadsOverThem() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("store"), MODEL)
                .withFrontend("127.0.0.1", 0, 40, 50)
                .withPools(List.of(Pool.of("dynamo", MODEL, Role.PREFILL, 1),
                        Pool.of("dynamo", MODEL, Role.DECODE, 1).withDp(2))));
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", "store",
                List.of("dynamo"), false, "");
        // One gauge series per (worker, rank): the prefill worker's rank 0 and the decode worker's two ranks.
        awaitSubscribed(2, 3);
        SimWorker decode = fleet.workers().stream().filter(w -> w.role() == Role.DECODE).findFirst().orElseThrow();

        // The emulator refuses a rank beyond the worker's data_parallel_size; streams of 2 s keep both ranks busy.
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            pending.add(client.sendAsync(post("/v1/chat/completions", chatBody(MODEL, true, "")).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> decode.kvUsedBlocks(0) > 0 && decode.kvUsedBlocks(1) > 0);
        for (CompletableFuture<HttpResponse<String>> p : pending) {
            HttpResponse<String> r = p.get(60, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        assertThat(fleet.frontend().served(decode.instanceId())).isEqualTo(6);
    }

    @Test
    void aFleetRegisteredInEtcdUnderLeasesIsPinnedAndLeavesWhenItsLeasesGo() throws Exception {
        SimFleet fleet = SimFleet.start(SimFleet.Options.defaults(dir.resolve("unused"), MODEL)
                .withStore(new Store.Etcd(List.of(ETCD.endpoint()))));
        try {
            startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", """
                        etcd:
                          endpoints: ["%s"]
                          namespace: dynamo
                          watch_reconnect_backoff: {initial: 100ms, max: 1s}
                    """.formatted(ETCD.endpoint()), false, "");
            awaitSubscribed(4);

            for (boolean stream : List.of(false, true)) {
                HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, stream, ""))
                        .header("x-backend", "").build());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                // With etcd, a worker's instance ID is its lease ID, pinned in decimal.
                assertThat(role(fleet, disclosed(r, "x-continuum-worker-instance-id"))).isEqualTo(Role.DECODE);
                assertThat(role(fleet, disclosed(r, "x-continuum-prefill-instance-id"))).isEqualTo(Role.PREFILL);
            }
        } finally {
            fleet.close(); // revokes the leases: every key goes at once
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(JSON.readTree(send(get("/admin/dynamo/workers")).body()).get("workers")).isEmpty());
    }

    @Test
    void aDecodeWorkersLeaseRevokedUnderLoadTakesItOutAndNoFurtherRequestIsPinnedToIt() throws Exception {
        SimFleet fleet = fleet(SimFleet.Options.defaults(dir.resolve("unused"), MODEL).withWorkers(1, 2)
                .withFrontend("127.0.0.1", 0, 40, 50).withStore(new Store.Etcd(List.of(ETCD.endpoint()))));
        // The production reconnect backoff (500 ms to 30 s): the leave must be seen within its bound plus 1 s.
        Duration converges = Duration.ofSeconds(31);
        startRouter(List.of(backend("frontend", fleet.frontendUrl(), MODEL)), "backends: [frontend]", """
                    etcd:
                      endpoints: ["%s"]
                      namespace: dynamo
                """.formatted(ETCD.endpoint()), false, "");
        awaitSubscribed(3);
        List<SimWorker> decode = fleet.workers().stream().filter(w -> w.role() == Role.DECODE).toList();
        SimWorker revoked = decode.get(0);
        SimWorker kept = decode.get(1);

        // Under load: streams of 2 s in flight on both decode workers when the lease goes.
        List<CompletableFuture<HttpResponse<String>>> inFlight = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            inFlight.add(client.sendAsync(post("/v1/chat/completions", chatBody(MODEL, true, "")).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(20)).until(() -> revoked.inFlight() > 0 && kept.inFlight() > 0);
        ETCD.writer().getLeaseClient().revoke(revoked.instanceId()).get(10, TimeUnit.SECONDS);

        await().atMost(converges).untilAsserted(() -> assertThat(JSON.readTree(send(get("/admin/dynamo/workers"))
                .body()).get("workers").findValuesAsText("instance_id"))
                .doesNotContain(Long.toHexString(revoked.instanceId())).contains(Long.toHexString(kept.instanceId())));
        long servedBefore = fleet.frontend().served(revoked.instanceId());
        for (int i = 0; i < 8; i++) {
            HttpResponse<String> r = send(post("/v1/chat/completions", chatBody(MODEL, false, ""))
                    .header("x-backend", "").build());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(disclosed(r, "x-continuum-worker-instance-id")).isEqualTo(kept.instanceId());
        }
        assertThat(fleet.frontend().served(revoked.instanceId())).isEqualTo(servedBefore);
        for (CompletableFuture<HttpResponse<String>> f : inFlight) {
            f.get(60, TimeUnit.SECONDS); // whatever became of them, they end
        }
    }

    // ---------------------------------------------------------------- fixture

    private SimFleet fleet(SimFleet.Options options) throws Exception {
        SimFleet fleet = SimFleet.start(options);
        closeables.add(fleet);
        return fleet;
    }

    private static SimFleet.Options namespaced(Path store, String namespace) {
        SimFleet.Options d = SimFleet.Options.defaults(store, MODEL);
        // Streams of 2 s, so a burst is in flight at once even on a slow machine.
        return new SimFleet.Options(d.root(), namespace, d.model(), 1, 1, d.totalKvBlocks(), d.kvCacheBlockSize(),
                d.maxNumBatchedTokens(), d.heartbeat(), d.publishInterval(), d.frontendHost(), d.frontendPort(),
                40, 50);
    }

    private TestUpstream upstream(TestUpstream upstream) {
        closeables.add(upstream);
        return upstream;
    }

    private static String backend(String name, URI url, String model) {
        return "  - {name: %s, url: \"%s\", models: [\"%s\"]}\n".formatted(name, url, model);
    }

    private static String backend(String name, String url, String model) {
        return backend(name, URI.create(url), model);
    }

    /** The router on the file store at {@code dir/store}, watching {@code namespaces}. */
    private void startRouter(List<String> backends, String shim, String store, List<String> namespaces,
            boolean fallback, String loadExtra) throws Exception {
        startRouter(backends, shim, """
                    source: file
                    file:
                      root: "%s"
                      namespaces: [%s]
                      rescan_interval: 100ms
                """.formatted(dir.resolve(store), String.join(", ", namespaces)), fallback, loadExtra);
    }

    /** @param discovery the body of {@code dynamo.discovery}, indented by four spaces */
    private void startRouter(List<String> backends, String shim, String discovery, boolean fallback,
            String loadExtra) throws Exception {
        String yaml = """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                %s
                disaggregated_serving: {enabled: true, fallback_to_unified: %s}
                health_checks: {enabled: false}
                admin:
                  auth:
                    method: none
                dynamo:
                  enabled: true
                  discovery:
                %s
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                    %s
                  shim:
                    %s
                """.formatted(String.join("", backends).stripTrailing(), fallback, discovery.stripTrailing(),
                loadExtra, shim);
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, yaml);
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(file))
                .dynamoSections(sections.all()).build(), sections,
                () -> System.nanoTime() + clockOffsetNanos.get());
    }

    /** Waits until the router sees {@code workers} workers, each with a connected subscription and a sample. */
    private void awaitSubscribed(int workers) {
        awaitSubscribed(workers, workers);
    }

    /** As above, with {@code ranks} (worker, dp_rank) samples held in all. */
    private void awaitSubscribed(int workers, int ranks) {
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode view = JSON.readTree(send(get("/admin/dynamo/workers")).body());
            assertThat(view.get("workers")).as(view.toString()).hasSize(workers);
            JsonNode subscriptions = view.get("subscriptions");
            assertThat(subscriptions).as(view.toString()).hasSize(workers);
            subscriptions.forEach(s -> assertThat(s.get("state").asText()).as(s.toString()).isEqualTo("connected"));
            // One gauge series per (worker, dp_rank) whose latest sample the load store holds.
            assertThat(send(get("/metrics")).body().lines()
                    .filter(l -> l.startsWith("continuum_dynamo_load_kv_used_blocks{"))).hasSize(ranks);
        });
    }

    private List<CompletableFuture<HttpResponse<String>>> burstAsync(int n, String model) {
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            pending.add(client.sendAsync(post("/v1/chat/completions", chatBody(model, true, ""))
                    .header("x-backend", "").build(), HttpResponse.BodyHandlers.ofString()));
        }
        return pending;
    }

    private List<HttpResponse<String>> burst(int n, String model) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> pending = burstAsync(n, model);
        List<HttpResponse<String>> out = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> p : pending) {
            out.add(p.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    private static String chatBody(String model, boolean stream, String extra) {
        return "{\"model\":\"" + model + "\",\"stream\":" + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about the sea.\"}]" + extra + "}";
    }

    private HttpRequest.Builder post(String path, String body) {
        return post(path, body, new String[0][]);
    }

    /** @param headers name/value pairs */
    private HttpRequest.Builder post(String path, String body, String[][] headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (String[] h : headers) {
            b.header(h[0], h[1]);
        }
        return b;
    }

    private HttpRequest get(String path) {
        return get(path, new String[0][]);
    }

    private HttpRequest get(String path, String[][] headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        for (String[] h : headers) {
            b.header(h[0], h[1]);
        }
        return b.build();
    }

    private HttpResponse<String> send(HttpRequest request) throws Exception {
        return client.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static long disclosed(HttpResponse<String> r, String header) {
        return Long.parseUnsignedLong(r.headers().firstValue(header)
                .orElseThrow(() -> new AssertionError(header + " missing: " + r.headers().map())));
    }

    private static Role role(SimFleet fleet, long instanceId) {
        return fleet.workers().stream().filter(w -> w.instanceId() == instanceId).findFirst()
                .orElseThrow(() -> new AssertionError(Long.toUnsignedString(instanceId) + ": not a fleet worker"))
                .role();
    }

    private static SimFleet owner(long instanceId, SimFleet... fleets) {
        for (SimFleet f : fleets) {
            if (f.workers().stream().anyMatch(w -> w.instanceId() == instanceId)) {
                return f;
            }
        }
        throw new AssertionError(Long.toUnsignedString(instanceId) + ": in no fleet");
    }

    private static long served(SimFleet fleet, Role role) {
        return fleet.workers().stream().filter(w -> w.role() == role)
                .mapToLong(w -> fleet.frontend().served(w.instanceId())).sum();
    }

    private double selections(String reason) throws Exception {
        return selections(reason, null);
    }

    /** The sum of {@code continuum_dynamo_selection_total} series matching {@code reason} and {@code role}. */
    private double selections(String reason, String role) throws Exception {
        return metric("continuum_dynamo_selection_total", (reason == null ? "" : "reason=\"" + reason + "\""),
                role == null ? "" : "role=\"" + role + "\"");
    }

    /** Waits until the router has applied {@code rounds} more samples per rank of {@code worker}'s size. */
    private void awaitHealthySampleRounds(SimWorker worker, int rounds) throws Exception {
        double applied = appliedSamples();
        await().atMost(Duration.ofSeconds(30)).until(() -> appliedSamples() >= applied + rounds * worker.dpSize());
    }

    /** kv_metrics samples the router has decoded and stored. */
    private double appliedSamples() throws Exception {
        return metric("continuum_dynamo_load_events_total", "result=\"applied\"");
    }

    /** The sum of the {@code name} series whose labels contain every one of {@code labels}. */
    private double metric(String name, String... labels) throws Exception {
        String text = send(get("/metrics")).body();
        double sum = 0;
        for (String line : text.split("\n")) {
            if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) {
                continue;
            }
            boolean all = Stream.of(labels).allMatch(line::contains);
            if (all) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
