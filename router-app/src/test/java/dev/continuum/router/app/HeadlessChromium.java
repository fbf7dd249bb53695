package dev.continuum.router.app;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Debian's headless {@code chromium}, driven over the DevTools protocol (JSON over a websocket, JDK client): the
 * browser tests' real peer. {@link #start} answers null, with the reason in {@link #whyNot}, only when the browser
 * cannot run at all on this machine.
 */
final class HeadlessChromium implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    static volatile String whyNot = "";

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    /** Console errors, uncaught exceptions and failed loads the page reported, as text. */
    final List<String> errors = new CopyOnWriteArrayList<>();

    private HeadlessChromium(Process process, Path profile, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
    }

    static HeadlessChromium start() throws Exception {
        Path binary = Path.of("/usr/bin/chromium");
        if (!Files.isExecutable(binary)) {
            whyNot = "no chromium at /usr/bin/chromium (bin/test installs Debian's chromium package)";
            return null;
        }
        Path profile = Files.createTempDirectory("continuum-chromium");
        Process p = new ProcessBuilder(binary.toString(), "--headless=new", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--remote-debugging-port=0",
                "--remote-allow-origins=*", "--window-size=1280,1000", "--user-data-dir=" + profile, "about:blank")
                .redirectErrorStream(true).redirectOutput(profile.resolve("chromium.log").toFile()).start();
        Path active = profile.resolve("DevToolsActivePort");
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> !p.isAlive()
                    || (Files.exists(active) && Files.readAllLines(active).size() >= 2));
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // reported below
        }
        if (!p.isAlive() || !Files.exists(active) || Files.readAllLines(active).size() < 2) {
            p.destroyForcibly();
            whyNot = "chromium did not start: " + String.join(" | ",
                    Files.readAllLines(profile.resolve("chromium.log")).stream().limit(5).toList());
            return null;
        }
        int port = Integer.parseInt(Files.readAllLines(active).get(0).trim());
        HttpClient http = HttpClient.newHttpClient();
        String wsUrl = null;
        for (JsonNode t : JSON.readTree(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/json/list")).build(), HttpResponse.BodyHandlers.ofString()).body())) {
            if ("page".equals(t.path("type").asText())) {
                wsUrl = t.get("webSocketDebuggerUrl").asText();
                break;
            }
        }
        if (wsUrl == null) {
            p.destroyForcibly();
            whyNot = "chromium offered no page target";
            return null;
        }
        Holder holder = new Holder();
        WebSocket ws = http.newWebSocketBuilder().buildAsync(URI.create(wsUrl), holder).get(10, TimeUnit.SECONDS);
        HeadlessChromium c = new HeadlessChromium(p, profile, ws);
        holder.owner = c;
        c.call("Runtime.enable", Map.of());
        c.call("Log.enable", Map.of());
        c.call("Network.enable", Map.of());
        c.call("Page.enable", Map.of());
        return c;
    }

    /** Receives the browser's messages: answers complete their call, events of interest are kept. */
    private static final class Holder implements WebSocket.Listener {
        volatile HeadlessChromium owner;
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                String text = partial.toString();
                partial.setLength(0);
                try {
                    owner.receive(JSON.readTree(text));
                } catch (IOException e) {
                    owner.errors.add("undecodable DevTools message: " + e);
                }
            }
            webSocket.request(1);
            return null;
        }
    }

    private void receive(JsonNode m) {
        if (m.has("id")) {
            CompletableFuture<JsonNode> f = pending.remove(m.get("id").asInt());
            if (f != null) {
                if (m.has("error")) {
                    f.completeExceptionally(new IllegalStateException(m.get("error").toString()));
                } else {
                    f.complete(m.get("result"));
                }
            }
            return;
        }
        String method = m.path("method").asText();
        JsonNode params = m.path("params");
        switch (method) {
            case "Runtime.consoleAPICalled" -> {
                if ("error".equals(params.path("type").asText())) {
                    errors.add("console.error " + params.path("args"));
                }
            }
            case "Runtime.exceptionThrown" -> errors.add("exception " + params.path("exceptionDetails"));
            case "Log.entryAdded" -> {
                if ("error".equals(params.path("entry").path("level").asText())) {
                    errors.add("log " + params.path("entry").path("text").asText());
                }
            }
            default -> {
            }
        }
    }

    JsonNode call(String method, Map<String, ?> params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> f = new CompletableFuture<>();
        pending.put(id, f);
        ObjectNode msg = JSON.createObjectNode();
        msg.put("id", id);
        msg.put("method", method);
        msg.set("params", JSON.valueToTree(params));
        socket.sendText(JSON.writeValueAsString(msg), true).get(10, TimeUnit.SECONDS);
        return f.get(30, TimeUnit.SECONDS);
    }

    /** Evaluates {@code expression} in the page and answers its value (JSON-shaped). */
    JsonNode eval(String expression) throws Exception {
        JsonNode r = call("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true));
        if (r.has("exceptionDetails")) {
            throw new IllegalStateException("page threw: " + r.get("exceptionDetails"));
        }
        return r.path("result").path("value");
    }

    /** Sends {@code headers} with every request the page makes from now on (the admin credential). */
    void headers(Map<String, String> headers) throws Exception {
        call("Network.setExtraHTTPHeaders", Map.of("headers", headers));
    }

    void navigate(String url) throws Exception {
        call("Page.navigate", Map.of("url", url));
    }

    void screenshot(Path file) throws Exception {
        JsonNode r = call("Page.captureScreenshot", Map.of("format", "png"));
        Files.createDirectories(file.getParent());
        Files.write(file, java.util.Base64.getDecoder().decode(r.get("data").asText()));
    }

    @Override
    public void close() throws Exception {
        socket.abort();
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (var walk = Files.walk(profile)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    static Duration timeout() {
        return Duration.ofSeconds(30);
    }
}
