package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.testing.TestCertificates;
import dev.continuum.router.testing.SseBackend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kv_cache_index_sources} of {@code GET /admin/dynamo/workers} from the whole router process: a
 * {@code dynamo.kv_cache_index} source reading a real {@code https} SSE backend (the JDK's TLS server, certificate
 * from a CA generated here and named by {@code tls.ca_cert}) shows up connected with its resume point and blocks,
 * turns to {@code backoff} with its reason when the backend goes away, and has exactly the fields
 * docs/admin-api.md documents, in that order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class KvCacheIndexAdminTest {
    private static final String TOKEN = "admin-token-kv-4411";

    @TempDir
    Path dir;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private RouterProcess router;

    @AfterEach
    void stop() throws Exception {
        if (router != null) {
            router.close();
        }
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private JsonNode sources() throws Exception {
        InetSocketAddress address = (InetSocketAddress) router.boundAddresses().get(0);
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + address.getPort()
                        + "/admin/dynamo/workers")).header("Authorization", "Bearer " + TOKEN).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(r.body()).get("kv_cache_index_sources");
    }

    @Test
    void theAdminViewShowsAnHttpsSourceConnectedThenInBackoffWithTheDocumentedFields() throws Exception {
        TestCertificates certs = TestCertificates.generate(dir.resolve("backend"), List.of("127.0.0.1"));
        SseBackend backend = new SseBackend(certs);
        closeAfter.add(backend);
        Path config = Files.writeString(dir.resolve("config.yaml"), """
                server:
                  bind_address: "127.0.0.1:0"
                  shutdown_quiet_period: 0s
                backends:
                  - {name: vllm-1, url: "http://127.0.0.1:9"}
                admin:
                  auth: {method: bearer_token, token: "%s"}
                dynamo:
                  kv_cache_index:
                    sources:
                      - {backend: vllm-1, url: "%s", tls: {ca_cert: "%s"}}
                """.formatted(TOKEN, backend.url(), certs.caCert()));
        DynamoSections sections = DynamoSections.create(Map.of());
        router = RouterProcess.start(ConfigLoader.builder().environment(Map.of())
                .overrides(ConfigOverrides.none().withConfigFile(config)).dynamoSections(sections.all()).build(),
                sections);

        backend.publish("{\"type\":\"BlockStored\",\"block_hashes\":[1,2]}");
        await().atMost(Duration.ofSeconds(20)).until(() -> sources().get(0).get("blocks").asInt() == 2);
        JsonNode row = sources().get(0);
        assertThat(fieldNames(row)).containsExactlyElementsOf(documentedFields());
        assertThat(row.get("backend").asText()).isEqualTo("vllm-1");
        assertThat(row.get("transport").asText()).isEqualTo("direct");
        assertThat(row.get("state").asText()).isEqualTo("connected");
        assertThat(row.get("kv_listener").isNull()).isTrue();
        assertThat(row.get("last_event_id").asText()).isEqualTo("1");
        assertThat(row.get("last_event_at").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(row.get("failures").get("tls").asLong()).isZero();

        backend.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> sources().get(0).get("failures").get("connect").asLong() > 0);
        row = sources().get(0);
        assertThat(row.get("state").asText()).isIn("backoff", "connecting");
        assertThat(row.get("last_error").asText()).isEqualTo("connect: refused");
        assertThat(row.get("blocks").asInt()).isEqualTo(2); // kept while the source reconnects
        assertThat(row.toString()).doesNotContain(certs.caCert().toString());
    }

    private static List<String> fieldNames(JsonNode row) {
        List<String> names = new ArrayList<>();
        for (Iterator<String> it = row.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        return names;
    }

    /** The first column of the field table under docs/admin-api.md's "Backend KV cache index sources". */
    private static List<String> documentedFields() throws IOException {
        List<String> lines = Files.readAllLines(DeployFiles.repositoryRoot().resolve("docs/admin-api.md"));
        List<String> fields = new ArrayList<>();
        boolean inSection = false;
        Pattern name = Pattern.compile("^\\| `([a-z_]+)` \\|");
        for (String line : lines) {
            if (line.startsWith("### ")) {
                inSection = line.equals("### Backend KV cache index sources");
                continue;
            }
            Matcher m = name.matcher(line);
            if (inSection && m.find()) {
                fields.add(m.group(1));
            }
        }
        assertThat(fields).as("the field table in docs/admin-api.md").isNotEmpty();
        return fields;
    }
}
