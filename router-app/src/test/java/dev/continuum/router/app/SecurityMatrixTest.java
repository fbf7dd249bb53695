package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The security matrix (docs/reliability.md, "Security matrix"), against the whole router over raw sockets
 * (so path tricks reach the server byte for byte), on both of its ingresses (TCP and a unix socket), with a
 * real upstream recording what it received:
 *
 * <ul>
 *   <li>client pins are stripped on every proxied route (the OpenAI ones, the Anthropic Messages and Responses
 *       ingresses, the Responses compact passthrough), in every spelling and case, from headers and from the
 *       body's {@code nvext}, and {@code x-tenant-id} is kept;</li>
 *   <li>every admin path and method, with every wrong credential and path trick, never answers 2xx without
 *       the right token; {@code /health} and {@code /metrics} need none;</li>
 *   <li>no configured secret (admin token, client API key, bypass key, backend API key, etcd password, a
 *       password inside a URL) appears in any readback, response, error, {@code config show} or
 *       {@code config validate} output, reload failure, or log line (every logger at debug, with stack
 *       traces).</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SecurityMatrixTest {
    private static final String ADMIN_TOKEN = "adm1n-T0ken-7f3a9c55";
    private static final String CLIENT_KEY = "cl1ent-Key-51b2e8aa";
    private static final String BYPASS_KEY = "byp4ss-Key-c0ffee11";
    private static final String BACKEND_KEY = "b4ckend-Key-9d8e7f22";
    private static final String ETCD_PASSWORD = "etcd-P4ss-e1e2e3f4";
    private static final String URL_PASSWORD = "url-P4ss-a1b2c3d4";
    private static final List<String> SECRETS = List.of(ADMIN_TOKEN, CLIENT_KEY, BYPASS_KEY, BACKEND_KEY,
            ETCD_PASSWORD, URL_PASSWORD);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Every spelling a client could pin with (case varied), each with a value the router never sends. */
    private static final String[][] PIN_HEADERS = {
        {"x-dynamo-worker-instance-id", "11"}, {"X-Dynamo-Prefill-Instance-Id", "12"}, {"X-DYNAMO-DP-RANK", "3"},
        {"x-DyNaMo-anything", "13"}, {"X-Worker-Instance-Id", "14"}, {"x-PREFILL-instance-id", "15"},
        {"X-Dp-Rank", "4"}, {"x-data-parallel-rank", "5"}, {"X-Prefill-Dp-Rank", "6"}};
    private static final String[] NVEXT_PINS = {"backend_instance_id", "prefill_worker_id", "decode_worker_id",
        "dp_rank", "prefill_dp_rank", "token_data"};

    /** Static: one directory for the one router of this class (PER_CLASS lifecycle). */
    @TempDir
    static Path dir;

    private final List<String> logLines = new CopyOnWriteArrayList<>();
    private final List<String> outputs = new CopyOnWriteArrayList<>();
    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent event) {
            String text = event.getLoggerName() + " " + event.getFormattedMessage();
            if (event.getThrowableProxy() != null) {
                text += "\n" + ThrowableProxyUtil.asString(event.getThrowableProxy());
            }
            logLines.add(text);
        }
    };
    private TestUpstream upstream;
    private RouterProcess router;
    private Path config;

    @BeforeAll
    void start() throws Exception {
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        appender.start();
        root.addAppender(appender);
        // A fixed answer: the default one echoes the request headers, the backend key among them.
        upstream = TestUpstream.start("secure").models("m")
                .defaultReply(Reply.status(200, "{\"id\":\"x\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
                        + "\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"));
        config = dir.resolve("config.yaml");
        Files.writeString(config, goodConfig());
        Map<String, String> env = Map.of();
        DynamoSections sections = DynamoSections.create(env);
        router = RouterProcess.start(ConfigLoader.builder().environment(env)
                .overrides(ConfigOverrides.none().withConfigFile(config))
                .dynamoSections(sections.all()).build(), sections);
    }

    @AfterAll
    void stop() {
        if (router != null) {
            router.close();
        }
        if (upstream != null) {
            upstream.close();
        }
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(appender);
    }

    private String goodConfig() {
        return """
                server:
                  bind_address: ["127.0.0.1:0", "unix:%s"]
                  shutdown_quiet_period: 0s
                backends:
                  - {name: main, url: "%s", models: [m], api_key: "%s"}
                health_checks: {enabled: false}
                logging: {level: debug}
                api_keys:
                  mode: blocking
                  api_keys:
                    - {key: "%s", id: client}
                rate_limiting:
                  enabled: true
                  bypass_keys: ["%s"]
                admin:
                  auth: {method: bearer_token, token: "%s"}
                dynamo:
                  enabled: true
                  discovery:
                    etcd:
                      endpoints: ["http://127.0.0.1:1"]
                      namespace: dynamo
                      auth: {username: router, password: "%s"}
                """.formatted(socket(), upstream.baseUrl(), BACKEND_KEY, CLIENT_KEY, BYPASS_KEY, ADMIN_TOKEN,
                ETCD_PASSWORD);
    }

    /** The second ingress: a unix socket listener beside the TCP one. */
    private Path socket() {
        return dir.resolve("router.sock");
    }

    // ------------------------------------------------------------------------------------------- pins

    @Test
    void clientPinsAreStrippedOnEveryProxiedRouteAndSpellingAndTheTenantIsKept() throws Exception {
        String nvext = "\"nvext\":{\"backend_instance_id\":1,\"prefill_worker_id\":2,\"decode_worker_id\":3,"
                + "\"dp_rank\":0,\"prefill_dp_rank\":0,\"token_data\":[1,2],\"annotations\":[\"kept\"]}";
        String messages = "\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],";
        // {method, client path, body, upstream path}; the converting ingresses build a new chat body, so none of
        // the client's nvext reaches the upstream there (a passthrough keeps the fields that are not pins).
        List<String[]> routes = List.of(
                new String[] {"POST", "/v1/chat/completions", "{\"model\":\"m\",\"messages\":[]," + nvext + "}",
                    "/v1/chat/completions"},
                new String[] {"POST", "/v1/chat/completions", "{\"model\":\"m\",\"stream\":true,\"messages\":[],"
                        + nvext + "}", "/v1/chat/completions"},
                new String[] {"POST", "/v1/completions", "{\"model\":\"m\",\"prompt\":\"x\"," + nvext + "}",
                    "/v1/completions"},
                new String[] {"POST", "/v1/completions", "{\"model\":\"m\",\"stream\":true,\"prompt\":\"x\","
                        + nvext + "}", "/v1/completions"},
                new String[] {"POST", "/v1/messages", "{\"model\":\"m\"," + messages + nvext + "}",
                    "/v1/chat/completions"},
                new String[] {"POST", "/v1/messages", "{\"model\":\"m\",\"stream\":true," + messages + nvext + "}",
                    "/v1/chat/completions"},
                new String[] {"POST", "/anthropic/v1/messages", "{\"model\":\"m\"," + messages + nvext + "}",
                    "/v1/chat/completions"},
                new String[] {"POST", "/v1/responses", "{\"model\":\"m\",\"input\":\"x\"," + nvext + "}",
                    "/v1/chat/completions"},
                new String[] {"POST", "/v1/responses", "{\"model\":\"m\",\"stream\":true,\"input\":\"x\","
                        + nvext + "}", "/v1/chat/completions"},
                new String[] {"POST", "/v1/responses/compact", "{\"model\":\"m\",\"input\":\"x\"," + nvext + "}",
                    "/v1/responses/compact"});
        for (boolean unix : List.of(false, true)) {
            for (String[] route : routes) {
                // All spellings at once, then each alone (a stripper that stops at the first match is caught).
                List<List<String[]>> sets = new ArrayList<>();
                sets.add(List.of(PIN_HEADERS));
                for (String[] h : PIN_HEADERS) {
                    sets.add(List.of(h, new String[] {h[0].toUpperCase(Locale.ROOT), h[1]}));
                }
                for (List<String[]> pins : sets) {
                    upstream.clearRecorded();
                    StringBuilder headers = new StringBuilder("Authorization: Bearer " + CLIENT_KEY + "\r\n"
                            + "x-tenant-id: tenant-7\r\n");
                    pins.forEach(h -> headers.append(h[0]).append(": ").append(h[1]).append("\r\n"));
                    Raw r = raw(unix, route[0], route[1], headers.toString(), route[2]);
                    // The test upstream serves chat and completions only: it answers the compact passthrough 404,
                    // after recording what it received.
                    assertThat(r.status()).as("%s %s (unix %s): %s", route[0], route[1], unix, r.text())
                            .isEqualTo(route[3].equals("/v1/responses/compact") ? 404 : 200);
                    List<RecordedRequest> seen = upstream.requests(q -> q.path().equals(route[3]));
                    assertThat(seen).as(route[1]).hasSize(1);
                    RecordedRequest got = seen.get(0);
                    assertThat(got.headers().keySet()).as("%s %s", route[0], route[1])
                            .noneMatch(h -> h.startsWith("x-dynamo-"))
                            .doesNotContain("x-worker-instance-id", "x-prefill-instance-id", "x-dp-rank",
                                    "x-data-parallel-rank", "x-prefill-dp-rank");
                    assertThat(got.header("x-tenant-id")).isEqualTo("tenant-7");
                    JsonNode sent = JSON.readTree(got.body());
                    if (!route[1].equals(route[3])) {
                        assertThat(sent.has("nvext")).as("nvext converted on %s", route[1]).isFalse();
                        continue;
                    }
                    for (String field : NVEXT_PINS) {
                        assertThat(sent.get("nvext").has(field)).as("nvext.%s on %s", field, route[1]).isFalse();
                    }
                    assertThat(sent.get("nvext").get("annotations").get(0).asText()).isEqualTo("kept");
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------- admin

    @Test
    void noAdminPathMethodOrTrickAnswers2xxWithoutTheRightToken() throws Exception {
        List<String> paths = List.of("/admin/config", "/admin/config/full", "/admin/config/reload",
                "/admin/dynamo/workers", "/admin/", "/admin", "/admin/nothing", "//admin/config",
                "/admin//config", "/admin/../admin/config", "/admin/./config", "/x/../admin/config",
                "/v1/../admin/config", "/health/../admin/config", "/%61dmin/config", "/admin%2Fconfig",
                "/%2e%2e/admin/config", "/admin/%63onfig", "/ADMIN/config", "/Admin/Config", "/admin/config/",
                "/admin/config?x=1", "/admin/config;x=1", "/admin/config%00", "/admin/config%20",
                "/admin/config?token=" + ADMIN_TOKEN, "/admin/config?access_token=" + ADMIN_TOKEN,
                "http://127.0.0.1/admin/config", "*");
        List<String> methods = List.of("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE");
        List<String> credentials = List.of("", "Authorization: Bearer wrong\r\n",
                "Authorization: Bearer " + ADMIN_TOKEN + "x\r\n",
                "Authorization: Bearer " + ADMIN_TOKEN.substring(1) + "\r\n",
                "Authorization: Basic " + java.util.Base64.getEncoder().encodeToString(("admin:" + ADMIN_TOKEN)
                        .getBytes(StandardCharsets.UTF_8)) + "\r\n",
                "Authorization: " + ADMIN_TOKEN + "\r\n", "X-Api-Key: " + ADMIN_TOKEN + "\r\n",
                "Authorization: Bearer " + CLIENT_KEY + "\r\n", "Authorization: Bearer \r\n",
                "Cookie: token=" + ADMIN_TOKEN + "\r\n");
        List<String> opened = new ArrayList<>();
        for (String path : paths) {
            for (String method : methods) {
                for (String credential : credentials) {
                    Raw r = raw(method, path, credential, method.equals("POST") || method.equals("PUT") ? "{}" : null);
                    if (r.status() >= 200 && r.status() < 300 || r.text().contains(upstream.baseUrl().toString())) {
                        opened.add(method + " " + path + " [" + credential.strip() + "] -> " + r.status());
                    }
                }
            }
        }
        assertThat(opened).as("admin answers without the right token").isEmpty();

        // The right token opens what it should; health and metrics need none.
        assertThat(raw("GET", "/admin/config", bearer(ADMIN_TOKEN), null).status()).isEqualTo(200);
        assertThat(raw("GET", "/health", "", null).status()).isEqualTo(200);
        assertThat(raw("GET", "/metrics", "", null).status()).isEqualTo(200);
    }

    // ------------------------------------------------------------------------------------------- secrets

    @Test
    void noSecretAppearsInAnyReadbackResponseErrorOrLogLine() throws Exception {
        String admin = bearer(ADMIN_TOKEN);
        raw("GET", "/admin/config", admin, null);
        raw("GET", "/admin/config/full", admin, null);
        raw("GET", "/admin/dynamo/workers", admin, null);
        raw("GET", "/metrics", "", null);
        raw("GET", "/v1/models", bearer(CLIENT_KEY), null);
        raw("POST", "/v1/chat/completions", bearer(CLIENT_KEY), "{\"model\":\"m\",\"messages\":[]}");
        raw("POST", "/v1/chat/completions", bearer(BYPASS_KEY), "{\"model\":\"m\",\"messages\":[]}");
        raw("POST", "/v1/chat/completions", bearer(CLIENT_KEY + "0"), "{\"model\":\"m\",\"messages\":[]}");
        raw("POST", "/v1/chat/completions", bearer(CLIENT_KEY), "{\"model\":\"nope\",\"messages\":[]}");
        raw("GET", "/admin/config", bearer(ADMIN_TOKEN + "0"), null);

        // A reload that fails, with every secret around the errors: a URL with a password, a bad key entry.
        String bad = goodConfig()
                .replace("url: \"" + upstream.baseUrl() + "\"", "url: \"http://ops:" + URL_PASSWORD + "@127.0.0.1:9\"")
                .replace("endpoints: [\"http://127.0.0.1:1\"]", "endpoints: [\"http://router:" + URL_PASSWORD
                        + "@127.0.0.1:1\"]")
                .replace("- {key: \"" + CLIENT_KEY + "\", id: client}", "- {key: \"" + CLIENT_KEY + "\", id: client}\n"
                        + "    - {key: \"" + CLIENT_KEY + "\", id: twice, rate_limit: -1}");
        Path good = dir.resolve("good.yaml");
        Files.copy(config, good);
        Files.writeString(config, bad);
        Raw reload = raw("POST", "/admin/config/reload", admin, "");
        assertThat(reload.status()).as(reload.text()).isEqualTo(422);
        assertThat(reload.text()).contains("error");

        // config show (masked) and config validate (errors) from the command line, on both files.
        cli("config", "show", good.toString());
        cli("config", "validate", config.toString());
        cli("config", "show", config.toString());
        Files.copy(good, config, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        await().atMost(Duration.ofSeconds(20)).until(() -> raw("POST", "/admin/config/reload", admin, "").status()
                == 200);

        assertThat(outputs).isNotEmpty();
        List<String> leaks = new ArrayList<>();
        for (String secret : SECRETS) {
            outputs.stream().filter(o -> o.contains(secret)).forEach(o -> leaks.add(secret + " in output: " + o));
            logLines.stream().filter(l -> l.contains(secret)).forEach(l -> leaks.add(secret + " in log: " + l));
        }
        assertThat(leaks).isEmpty();
        // The secrets were really there to leak: the backend received its key, and the config show masked.
        assertThat(upstream.requests(q -> BACKEND_KEY.equals(bearerOf(q)))).isNotEmpty();
        assertThat(outputs).anyMatch(o -> o.contains("********"));
        assertThat(logLines).isNotEmpty();
    }

    private static String bearerOf(RecordedRequest q) {
        String a = q.header("authorization");
        return a == null ? "" : a.replaceFirst("(?i)^bearer ", "");
    }

    private void cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true,
                StandardCharsets.UTF_8), Map.of());
        outputs.add(out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8));
    }

    private static String bearer(String token) {
        return "Authorization: Bearer " + token + "\r\n";
    }

    /** A response read whole off a raw socket: status and the full text (head and body). */
    private record Raw(int status, String text) {
    }

    private Raw raw(String method, String target, String headers, String body) throws IOException {
        return raw(false, method, target, headers, body);
    }

    /**
     * One request, byte for byte as given (no client-side normalisation of the path), over TCP or the unix
     * socket, then the whole answer.
     */
    private Raw raw(boolean unix, String method, String target, String headers, String body) throws IOException {
        if (unix) {
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(socket()));
                return exchange(Channels.newOutputStream(channel), Channels.newInputStream(channel), method, target,
                        headers, body);
            }
        }
        int port = ((InetSocketAddress) router.boundAddresses().get(0)).getPort();
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(20_000);
            return exchange(socket.getOutputStream(), socket.getInputStream(), method, target, headers, body);
        }
    }

    private Raw exchange(OutputStream out, InputStream in, String method, String target, String headers,
                         String body) throws IOException {
        byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        String head = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers
                + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + content.length
                + "\r\n") + "\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.write(content);
        out.flush();
        String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        outputs.add(text);
        int status = text.startsWith("HTTP/1.1 ") && text.length() >= 12 ? Integer.parseInt(text.substring(9, 12))
                : -1;
        return new Raw(status, text);
    }
}
