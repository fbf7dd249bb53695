package dev.continuum.router.shim;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A local stand-in for {@code dynamo.frontend --router-mode direct}, written from upstream's direct mode: it
 * resolves decimal pins against the workers it is told about, refuses a request without a prefill ID while
 * prefill workers exist with upstream's exact text, rejects unknown IDs, and answers buffered JSON or SSE.
 */
final class DirectModeShim implements AutoCloseable {
    /** What one request carried. */
    record Seen(Map<String, String> headers, String body) {
        @Nullable String header(String name) {
            return headers.get(name);
        }
    }

    /** Upstream's exact texts (ai-dynamo/dynamo lib/llm/src/kv_router/prefill_router/mod.rs, push_router.rs). */
    static final String PREFILL_ID_ERROR = "Prefill worker ID required in Direct routing mode but none found in "
            + "request. Expected prefill_worker_id to be set via x-prefill-instance-id header by external router "
            + "(e.g., EPP).";
    static final String WORKER_ID_ERROR = "Worker ID required (--direct-route) but none found in request. Expected "
            + "decode_worker_id or backend_instance_id to be set by external router (e.g., EPP).";

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(2);
    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final Set<Long> decodeWorkers = ConcurrentHashMap.newKeySet();
    private final Set<Long> prefillWorkers = ConcurrentHashMap.newKeySet();
    /** A forced answer (status and body) for the next requests, or null to serve. */
    private volatile Map.@Nullable Entry<Integer, String> forced;
    private volatile int refusalStatus = 400;

    private DirectModeShim() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(executor);
        server.createContext("/", this::handle);
        server.start();
    }

    static DirectModeShim start() {
        try {
            return new DirectModeShim();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    URI baseUrl() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    DirectModeShim decode(long... ids) {
        for (long id : ids) {
            decodeWorkers.add(id);
        }
        return this;
    }

    DirectModeShim prefill(long... ids) {
        for (long id : ids) {
            prefillWorkers.add(id);
        }
        return this;
    }

    DirectModeShim force(int status, String body) {
        forced = Map.entry(status, body);
        return this;
    }

    DirectModeShim refusalStatus(int status) {
        refusalStatus = status;
        return this;
    }

    List<Seen> seen() {
        return List.copyOf(seen);
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            byte[] in = ex.getRequestBody().readAllBytes();
            if (!"POST".equals(ex.getRequestMethod())) {
                reply(ex, 200, "application/json", "{\"object\":\"list\",\"data\":[]}");
                return;
            }
            Map<String, String> headers = ex.getRequestHeaders().entrySet().stream().collect(Collectors.toMap(
                    e -> e.getKey().toLowerCase(Locale.ROOT), e -> String.join(",", e.getValue()), (a, b) -> a));
            String body = new String(in, StandardCharsets.UTF_8);
            seen.add(new Seen(headers, body));
            ex.getResponseHeaders().add("x-dynamo-served-by", "shim"); // must never reach the client
            Map.Entry<Integer, String> f = forced;
            if (f != null) {
                reply(ex, f.getKey(), "application/json", f.getValue());
                return;
            }
            Long worker = decimal(headers.get(ShimDispatcher.WORKER_INSTANCE_ID));
            Long prefill = decimal(headers.get(ShimDispatcher.PREFILL_INSTANCE_ID));
            if (worker == null) {
                reply(ex, 500, "application/json", "{\"error\":{\"message\":\"" + WORKER_ID_ERROR + "\"}}");
                return;
            }
            if (prefill == null && !prefillWorkers.isEmpty()) {
                reply(ex, refusalStatus, "application/json", "{\"error\":{\"message\":\"" + PREFILL_ID_ERROR
                        + "\",\"type\":\"invalid_request_error\"}}");
                return;
            }
            if (!decodeWorkers.contains(worker)
                    || (prefill != null && !prefillWorkers.contains(prefill))) {
                reply(ex, 404, "application/json", "{\"error\":{\"message\":\"Worker not found\"}}");
                return;
            }
            if (body.contains("\"stream\":true")) {
                ex.getResponseHeaders().add("content-type", "text/event-stream");
                ex.sendResponseHeaders(200, 0);
                try (OutputStream out = ex.getResponseBody()) {
                    for (String token : List.of("Hel", "lo")) {
                        out.write(("data: {\"choices\":[{\"delta\":{\"content\":\"" + token + "\"}}]}\n\n")
                                .getBytes(StandardCharsets.UTF_8));
                        out.flush();
                    }
                    out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
                }
                return;
            }
            reply(ex, 200, "application/json", "{\"choices\":[{\"message\":{\"content\":\"Hello\"}}]}");
        }
    }

    /** Upstream reads only unsigned decimal; anything else (hex included) counts as absent. */
    private static @Nullable Long decimal(@Nullable String value) {
        if (value == null) {
            return null;
        }
        try {
            return Long.parseUnsignedLong(value);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static void reply(HttpExchange ex, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("content-type", type);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
