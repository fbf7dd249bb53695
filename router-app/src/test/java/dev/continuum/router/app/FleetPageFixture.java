package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

/**
 * What the fleet page's browser tests share: headless Chromium, the demo's router in front of a simulated fleet of
 * {@code prefill + decode} workers (every worker listed and every kv_metrics subscription connected before a test
 * runs), the admin API with the demo's token, and a screenshot per run under {@code target/fleet-page/}. Skips the
 * test class, with the reason, only when Chromium cannot run.
 */
final class FleetPageFixture implements AutoCloseable {
    static final Map<String, String> ADMIN = Map.of("Authorization", "Bearer demo");
    private static final ObjectMapper JSON = new ObjectMapper();

    final HeadlessChromium browser;
    final Demo demo;
    final HttpClient client = HttpClient.newHttpClient();

    private FleetPageFixture(HeadlessChromium browser, Demo demo) {
        this.browser = browser;
        this.demo = demo;
    }

    /** Starts the browser, then the fleet and router; returns once the admin API shows every worker connected. */
    static FleetPageFixture start(int prefill, int decode, Duration ready) throws Exception {
        HeadlessChromium browser = HeadlessChromium.start();
        Assumptions.assumeTrue(browser != null, () -> "headless chromium cannot run here: " + HeadlessChromium.whyNot);
        Demo demo;
        try {
            demo = Demo.start(Map.of(), List.of("127.0.0.1:0"), null, null, o -> o.withWorkers(prefill, decode));
        } catch (Exception | Error e) {
            browser.close();
            throw e;
        }
        FleetPageFixture f = new FleetPageFixture(browser, demo);
        try {
            await().atMost(ready).untilAsserted(() -> {
                JsonNode view = f.admin("/admin/dynamo/workers");
                assertThat(view.get("workers")).hasSize(prefill + decode);
                assertThat(view.get("subscriptions")).hasSize(prefill + decode);
                view.get("subscriptions").forEach(s -> assertThat(s.get("state").asText()).isEqualTo("connected"));
            });
        } catch (Exception | Error e) {
            f.close();
            throw e;
        }
        return f;
    }

    String routerUrl() {
        return demo.routerUrl();
    }

    /** {@code GET path} with the admin token; asserts 200 and answers the JSON body. */
    JsonNode admin(String path) throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(routerUrl() + path))
                .header("Authorization", "Bearer demo").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** Opens the page with the admin token (or none) and forgets earlier console errors. */
    void open(Map<String, String> headers) throws Exception {
        browser.errors.clear();
        browser.headers(headers);
        browser.navigate(routerUrl() + "/admin/ui");
    }

    /** Saves a screenshot of the page as {@code target/fleet-page/<name>-<time>.png} and answers its path. */
    Path screenshot(String name) throws Exception {
        Path shot = Path.of("target", "fleet-page", name + "-" + Instant.now().toString().replace(':', '-') + ".png");
        browser.screenshot(shot);
        return shot.toAbsolutePath();
    }

    @Override
    public void close() throws Exception {
        try {
            browser.close();
        } finally {
            demo.close();
        }
    }
}
