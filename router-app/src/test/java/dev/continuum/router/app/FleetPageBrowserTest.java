package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The admin fleet page in headless Chromium against the demo's router and its simulated fleet (2 prefill and 2
 * decode workers): decision ids on routed responses, the page loading without a console error, showing the
 * workers, moving as requests are routed, opening a decision's detail, and refused without the admin token. A
 * screenshot per run lands in {@code target/fleet-page/} ({@link FleetPageFixture}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class FleetPageBrowserTest {
    private static final Map<String, String> ADMIN = FleetPageFixture.ADMIN;
    private FleetPageFixture fleet;
    private HeadlessChromium browser;

    @BeforeAll
    void start() throws Exception {
        fleet = FleetPageFixture.start(2, 2, Duration.ofSeconds(30));
        browser = fleet.browser;
    }

    @AfterAll
    void stop() throws Exception {
        if (fleet != null) {
            fleet.close();
        }
    }

    @Test
    void routedResponsesCarryADecisionIdTheAdminApiResolves() throws Exception {
        List<String> ids = route(3);
        for (String id : ids) {
            JsonNode d = admin("/admin/dynamo/decisions/" + id);
            assertThat(d.get("id").asText()).isEqualTo(id);
            assertThat(d.get("model").asText()).isEqualTo("demo-model");
            assertThat(d.get("result").asText()).isEqualTo("load");
            assertThat(d.get("phases")).isNotEmpty();
            JsonNode winner = d.get("phases").get(0).get("candidates").get(d.get("phases").get(0).get("winner").asInt());
            assertThat(winner.get("worker").asText()).isEqualTo(d.get("decode_worker").asText());
            assertThat(d.toString()).doesNotContain("tcp://").doesNotContain("Bearer");
        }
        JsonNode list = admin("/admin/dynamo/decisions?limit=2&result=load");
        assertThat(list.get("decisions")).hasSize(2);
        assertThat(list.get("next_before").asText()).isNotEmpty();
        assertThat(list.get("totals").get("recorded").asLong()).isGreaterThanOrEqualTo(3);
        HttpResponse<String> refused = fleet.client.send(HttpRequest.newBuilder(URI.create(fleet.routerUrl()
                + "/admin/dynamo/decisions")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(401);
        HttpResponse<String> bad = fleet.client.send(HttpRequest.newBuilder(URI.create(fleet.routerUrl()
                + "/admin/dynamo/decisions?limit=100000")).headers("Authorization", "Bearer demo").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(bad.statusCode()).isEqualTo(400);
    }

    @Test
    void thePageShowsTheFleetMovesAndOpensADecision() throws Exception {
        route(4);
        long started = System.nanoTime();
        fleet.open(ADMIN);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(25)).until(() ->
                browser.eval("document.querySelectorAll('#ranks tbody tr').length").asInt() >= 4
                        && browser.eval("document.querySelectorAll('#decisions tbody tr').length").asInt() >= 1);
        long renderMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat(browser.eval("document.getElementById('subscriptions').textContent").asText())
                .contains("kv_metrics connected: 4");
        String roles = browser.eval("[...document.querySelectorAll('#ranks tbody tr td:nth-child(2)')]"
                + ".map(td => td.textContent).sort().join(',')").asText();
        assertThat(roles).isEqualTo("decode,decode,prefill,prefill");
        long before = browser.eval("Number(document.getElementById('q-recorded').textContent)").asLong();

        route(5);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                browser.eval("Number(document.getElementById('q-recorded').textContent)").asLong())
                .isGreaterThanOrEqualTo(before + 5));

        String firstId = browser.eval("document.querySelector('#decisions tbody tr').dataset.id").asText();
        browser.eval("document.querySelector('#decisions tbody tr').click()");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(browser.eval("document.getElementById('detail').hidden").asBoolean()).isFalse();
            assertThat(browser.eval("document.getElementById('detail-id').textContent").asText()).isEqualTo(firstId);
            assertThat(browser.eval("document.querySelectorAll('#detail-phases tr.winner').length").asInt())
                    .isGreaterThanOrEqualTo(1);
        });
        long pageBytes = browser.eval("performance.getEntriesByType('navigation')[0].decodedBodySize"
                + " + performance.getEntriesByType('resource').filter(r => r.name.includes('/admin/ui/'))"
                + ".reduce((a, r) => a + r.decodedBodySize, 0)").asLong();
        Path shot = fleet.screenshot("fleet-page");
        System.out.printf("fleet page: first render %d ms, page and assets %d bytes, screenshot %s%n",
                renderMillis, pageBytes, shot);
        assertThat(pageBytes).isBetween(1L, 200_000L);
        assertThat(browser.errors).as("console errors").isEmpty();
        assertThat(browser.eval("document.getElementById('status').className").asText()).isEqualTo("status");
    }

    /**
     * The page switches to the admin event stream once it is open, and moves over it alone: once a frame arrived the
     * page has stopped polling, so the decisions counted after more requests came over server-sent events.
     */
    @Test
    void theUpdatesArriveOverServerSentEvents() throws Exception {
        route(2);
        fleet.open(ADMIN);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() ->
                browser.eval("typeof window.continuumFleetPage === 'object'"
                        + " && window.continuumFleetPage.transport() === 'sse'").asBoolean());
        long before = browser.eval("Number(document.getElementById('q-recorded').textContent)").asLong();
        route(3);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> assertThat(
                browser.eval("Number(document.getElementById('q-recorded').textContent)").asLong())
                .isGreaterThanOrEqualTo(before + 3));
        assertThat(browser.eval("window.continuumFleetPage.transport()").asText()).isEqualTo("sse");
        assertThat(browser.eval("document.getElementById('status').textContent").asText()).endsWith("over sse");
        assertThat(browser.eval("document.querySelectorAll('#ranks tbody tr').length").asInt()).isGreaterThanOrEqualTo(4);
        assertThat(browser.errors).as("console errors").isEmpty();
    }

    /**
     * Hours of updates in seconds: 400 poll rounds driven back to back through the page's test hook (at the page's
     * rate that is 13 minutes), with requests routed between them so every round changes the tables and the trend.
     * The trend keeps its 120 points and the document's element count stays where the first rounds left it.
     */
    @Test
    void aPageLeftOpenHoldsItsSizeFlat() throws Exception {
        route(26); // the latest-decisions table is full from the first round on
        fleet.open(ADMIN);
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(25)).until(() ->
                browser.eval("typeof window.continuumFleetPage === 'object'"
                        + " && document.querySelectorAll('#ranks tbody tr').length >= 4").asBoolean());
        browser.errors.clear();
        long[] elements = new long[4];
        for (int batch = 0; batch < elements.length; batch++) {
            route(2);
            browser.eval("window.polled = null; (async () => { for (let i = 0; i < 100; i++)"
                    + " await window.continuumFleetPage.poll(); window.polled = window.continuumFleetPage.sizes(); })()");
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() ->
                    !browser.eval("window.polled").isNull() && browser.eval("window.polled").isObject());
            JsonNode sizes = browser.eval("window.polled");
            elements[batch] = sizes.get("elements").asLong();
            assertThat(sizes.get("history").asInt()).as("trend points after %d rounds", 100 * (batch + 1))
                    .isLessThanOrEqualTo(120);
        }
        assertThat(browser.eval("window.continuumFleetPage.sizes().history").asInt()).isEqualTo(120);
        // Tables are replaced in place: the latest decisions are capped at 25 rows, the ranks are the fleet's.
        assertThat(elements).as("elements after each 100 rounds").containsOnly(elements[0]);
        assertThat(browser.eval("document.querySelectorAll('#decisions tbody tr').length").asInt())
                .isLessThanOrEqualTo(25);
        assertThat(browser.errors).as("console errors").isEmpty();
    }

    @Test
    void thePageIsRefusedWithoutTheAdminToken() throws Exception {
        fleet.open(Map.of());
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(
                browser.eval("document.body ? document.body.innerText : ''").asText())
                .contains("invalid_admin_credentials"));
        assertThat(browser.eval("document.getElementById('ranks') === null").asBoolean()).isTrue();
        HttpResponse<String> script = fleet.client.send(HttpRequest.newBuilder(URI.create(fleet.routerUrl()
                + "/admin/ui/app.js")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(script.statusCode()).isEqualTo(401);
    }

    /** Routes {@code n} chat completions at once and answers their decision ids. */
    private List<String> route(int n) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            answers.add(fleet.client.sendAsync(HttpRequest.newBuilder(URI.create(fleet.routerUrl()
                            + "/v1/chat/completions"))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo-model\",\"stream\":" + (i % 2 == 0)
                            + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
                    HttpResponse.BodyHandlers.ofString()));
        }
        List<String> ids = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            String id = r.headers().firstValue("x-continuum-decision-id").orElseThrow();
            assertThat(id).matches("[0-9]+");
            ids.add(id);
        }
        return ids;
    }

    private JsonNode admin(String path) throws Exception {
        return fleet.admin(path);
    }
}
