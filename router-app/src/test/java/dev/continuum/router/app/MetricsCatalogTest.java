package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The Grafana dashboard (deploy/grafana) and the metric reference (docs/metrics.md) checked against what a
 * running router exports: the demo's router in front of the simulated Dynamo fleet (discovery, kv_metrics
 * subscriptions and the shim path all live), after one pinned chat completion. Every metric a panel queries
 * exists in /metrics, every family the router exports is on a panel (the JVM binders' families are covered
 * by a few representative panels, not one by one), and docs/metrics.md lists exactly the exported families.
 * The event bus's families exist only while a bus runs, which the demo does not: their panels and their table
 * are checked by {@link BrokerLiveCheckEndToEndTest} against a router with a live broker.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetricsCatalogTest {
    /** Micrometer's JVM, process and system binders: many families, documented and charted as groups. */
    private static final List<String> BINDER_PREFIXES = List.of("jvm_", "process_", "system_");
    /**
     * Families the demo cannot make exist, each with the reason; the dashboard and the docs may name them
     * without the scrape showing them. {@code active_prefill_tokens}: the simulator's workers, like Dynamo's
     * vLLM workers, publish it as nil, and a nil field exports no series (router-load's tests cover it).
     * {@code kv_index_rank_blocks}: a series per rank the KV index admitted, and the demo's fleet publishes no
     * kv-events (router-kv's tests cover it).
     */
    private static final Set<String> NOT_IN_THE_DEMO = Set.of("continuum_dynamo_load_active_prefill_tokens",
            "continuum_dynamo_kv_index_rank_blocks");
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{");
    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$", Pattern.MULTILINE);
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", Pattern.MULTILINE);
    private final Path root = DeployFiles.repositoryRoot();
    private Demo demo;
    private final Set<String> families = new TreeSet<>();
    private final Set<String> samples = new TreeSet<>();

    @BeforeAll
    void startTheDemoAndScrape() throws Exception {
        demo = Demo.start(Map.of(), List.of("127.0.0.1:0"), null);
        HttpClient client = HttpClient.newHttpClient();
        // Per-worker load gauges exist once the workers' samples arrived.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(scrape(client))
                .contains("continuum_dynamo_load_kv_used_blocks{", "continuum_dynamo_load_active_decode_blocks{"));
        HttpResponse<String> chat = client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl()
                + "/v1/chat/completions")).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"demo-model\",\"messages\":"
                        + "[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(chat.headers().firstValue("x-continuum-routing-path")).hasValue("prefill_then_decode");
        System.gc(); // the GC pause timer is registered on the first collection it hears of
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(client))
                .contains("jvm_gc_pause_seconds_count{"));
        String metrics = scrape(client);
        Matcher type = TYPE.matcher(metrics);
        while (type.find()) {
            families.add(type.group(1));
        }
        for (String absent : NOT_IN_THE_DEMO) {
            assertThat(families).as("now exported by the demo: drop it from NOT_IN_THE_DEMO").doesNotContain(absent);
            families.add(absent);
            samples.add(absent);
        }
        Matcher sample = SAMPLE.matcher(metrics);
        while (sample.find()) {
            samples.add(sample.group(1));
        }
    }

    @AfterAll
    void stop() {
        if (demo != null) {
            demo.close();
        }
    }

    private String scrape(HttpClient client) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(demo.routerUrl() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static boolean binder(String family) {
        return BINDER_PREFIXES.stream().anyMatch(family::startsWith);
    }

    @Test
    void everyDashboardQueryNamesAnExportedMetricAndEveryFamilyIsCharted() throws Exception {
        Set<String> queried = queriedMetrics(root.resolve("deploy/grafana/continuum-router.json"));
        // The event bus's panels query families only a router with a live bus exports; the demo runs none, so
        // BrokerLiveCheckEndToEndTest checks those panels against such a router.
        assertThat(samples).as("metrics the dashboard queries").containsAll(queried.stream()
                .filter(q -> !BrokerLiveCheckEndToEndTest.bus(q)).toList());
        List<String> uncharted = families.stream().filter(f -> !binder(f))
                .filter(f -> queried.stream().noneMatch(q -> q.equals(f) || q.equals(f + "_bucket")))
                .toList();
        assertThat(uncharted).as("exported families on no panel").isEmpty();
        for (String prefix : BINDER_PREFIXES) {
            assertThat(queried).as("a panel for the " + prefix + "* families").anyMatch(q -> q.startsWith(prefix));
        }
    }

    @Test
    void theDashboardIsWhatItsGeneratorWrites(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("continuum-router.json");
        Process python = new ProcessBuilder("python3", root.resolve("deploy/grafana/build-dashboard.py").toString(),
                out.toString()).redirectErrorStream(true).start();
        String log = new String(python.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(python.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(python.exitValue()).as(log).isZero();
        assertThat(Files.readString(out)).as("edit build-dashboard.py and regenerate; never the JSON by hand")
                .isEqualTo(Files.readString(root.resolve("deploy/grafana/continuum-router.json")));
    }

    @Test
    void theMetricReferenceListsExactlyTheExportedFamilies() throws Exception {
        List<String> documented = documentedFamilies(Files.readAllLines(root.resolve("docs/metrics.md")));
        assertThat(documented).isNotEmpty();

        List<String> missing = documented.stream().filter(d -> families.stream().noneMatch(f -> matches(d, f)))
                .toList();
        assertThat(missing).as("documented in docs/metrics.md but not exported").isEmpty();
        // A histogram's _max gauge is documented with the histogram.
        List<String> undocumented = families.stream().filter(f -> documented.stream().noneMatch(d -> matches(d, f)
                || matches(d + "_max", f))).toList();
        assertThat(undocumented).as("exported but not in docs/metrics.md").isEmpty();
    }

    /** The metric names the dashboard's queries select; each query must select by {job, instance}. */
    static Set<String> queriedMetrics(Path dashboardFile) throws java.io.IOException {
        JsonNode dashboard = new ObjectMapper().readTree(dashboardFile.toFile());
        Set<String> queried = new TreeSet<>();
        List<String> expressions = new ArrayList<>();
        dashboard.get("panels").forEach(panel -> panel.path("targets").forEach(t -> expressions.add(t.get("expr")
                .asText())));
        assertThat(expressions).isNotEmpty();
        for (String expr : expressions) {
            Matcher m = SELECTOR.matcher(expr);
            int found = 0;
            while (m.find()) {
                queried.add(m.group(1));
                found++;
            }
            assertThat(found).as("every query selects by {job, instance}: " + expr).isPositive();
        }
        return queried;
    }

    /** Exact, or a {@code prefix_*} group. */
    private static boolean matches(String documented, String family) {
        return documented.endsWith("*") ? family.startsWith(documented.substring(0, documented.length() - 1))
                : documented.equals(family);
    }

    /** The backticked names in the first column of every table whose first header is {@code family}. */
    static List<String> documentedFamilies(List<String> lines) {
        List<String> out = new ArrayList<>();
        boolean inFamilyTable = false;
        Pattern name = Pattern.compile("`([a-z0-9_:*]+)`");
        for (String line : lines) {
            if (!line.startsWith("|")) {
                inFamilyTable = false;
                continue;
            }
            String first = line.substring(1, line.indexOf('|', 1)).strip();
            if (first.equals("family")) {
                inFamilyTable = true;
            } else if (inFamilyTable && !first.startsWith("---")) {
                Matcher m = name.matcher(first);
                while (m.find()) {
                    out.add(m.group(1));
                }
            }
        }
        return out;
    }
}
