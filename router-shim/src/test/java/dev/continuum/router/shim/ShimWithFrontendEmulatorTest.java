package dev.continuum.router.shim;

import static dev.continuum.router.discovery.WorkerRole.AGGREGATED;
import static dev.continuum.router.discovery.WorkerRole.DECODE;
import static dev.continuum.router.discovery.WorkerRole.PREFILL;
import static dev.continuum.router.shim.ShimFleets.MODEL;
import static dev.continuum.router.shim.ShimFleets.worker;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.http.HttpServer;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.config.DiscoverySection;
import dev.continuum.router.sim.DirectFrontend;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The router in front of the simulator's direct-mode frontend emulator (written from the spec, not the router). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShimWithFrontendEmulatorTest {
    private final ScriptedLoad load = new ScriptedLoad();
    private final AtomicReference<DynamoSnapshot> fleet = new AtomicReference<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private DirectFrontend frontend;
    private HttpServer server;
    private int port;

    @AfterEach
    void tearDown() {
        if (server != null) {
            server.stop().join();
        }
        if (frontend != null) {
            frontend.close();
        }
    }

    private void start(List<DirectFrontend.Worker> emulated, DynamoWorker... routerView) throws Exception {
        frontend = DirectFrontend.start("127.0.0.1", 0, emulated, 4, 1);
        fleet.set(new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("dynamo"), 1, true,
                FleetView.of(List.of(routerView), List.of())));
        ShimSection section = new ShimSection();
        RouterConfig config = ConfigLoader.builder().environment(Map.of())
                .dynamoSection(DiscoverySection.create(Map.of())).dynamoSection(section).build()
                .loadString("""
                        server: {bind_address: "127.0.0.1:0"}
                        health_checks: {enabled: false}
                        disaggregated_serving: {enabled: true, fallback_to_unified: false}
                        backends:
                          - {name: frontend, url: "http://127.0.0.1:%d", models: ["%s"]}
                        dynamo:
                          enabled: true
                          discovery: {etcd: {endpoints: ["http://127.0.0.1:2379"]}}
                          shim: {backends: [frontend]}
                        """.formatted(frontend.address().getPort(), MODEL)).orThrow();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        server = HttpServer.builder(config, registry).shutdownGrace(Duration.ofMillis(300)).build();
        server.start().join();
        port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
        server.proxy().dispatchHook(ShimDispatcher.create(fleet::get, () -> config.dynamo().section(section),
                DynamoWorkerPicker.loadBased(load, load, registry), registry));
    }

    private HttpResponse<String> chat(boolean stream) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"stream\":" + stream
                        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story about a router.\"}]}"))
                .header("content-type", "application/json").header("x-dynamo-worker-instance-id", "999")
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theEmulatorResolvesEveryPinAndABurstSpreadsOverTheDecodeWorkers() throws Exception {
        start(List.of(new DirectFrontend.Worker(11, DirectFrontend.Role.DECODE, 1),
                        new DirectFrontend.Worker(12, DirectFrontend.Role.DECODE, 1),
                        new DirectFrontend.Worker(21, DirectFrontend.Role.PREFILL, 1)),
                worker("dynamo", 11, DECODE), worker("dynamo", 12, DECODE), worker("dynamo", 21, PREFILL));
        load.sample(new WorkerId("dynamo", 11), 0, 0L, null);
        load.sample(new WorkerId("dynamo", 12), 0, 0L, null);

        for (int i = 0; i < 6; i++) {
            HttpResponse<String> r = chat(i % 2 == 0);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
        }

        assertThat(frontend.served(11)).isEqualTo(3);
        assertThat(frontend.served(12)).isEqualTo(3);
        assertThat(frontend.served(21)).isEqualTo(6);
        assertThat(frontend.served(999)).isZero();
    }

    @Test
    void aPrefillPoolTheRouterCannotPairGets503FromTheEmulatorsRefusal() throws Exception {
        start(List.of(new DirectFrontend.Worker(5, DirectFrontend.Role.AGGREGATED, 1),
                        new DirectFrontend.Worker(9, DirectFrontend.Role.PREFILL, 1)),
                worker("dynamo", 5, AGGREGATED));

        HttpResponse<String> r = chat(true);

        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("disaggregated_prefill_decode_unavailable");
    }
}
