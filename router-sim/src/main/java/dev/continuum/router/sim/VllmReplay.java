package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * {@code continuum-sim replay --fleet vllm}: {@link KvReplay}'s replay against {@code --workers} simulated plain vLLM
 * servers ({@link SimVllmServer}, each with its prefix cache of {@code --kv-blocks} blocks, the Dynamo workers'
 * prefill model and vLLM-format KV events on its own PUB and replay sockets) instead of a Dynamo fleet. The servers
 * start first and are listed in {@code ROOT/servers.txt}, one line each: {@code name url kv_endpoint
 * replay_endpoint}, so that the harness can write the router's {@code backends[]} and {@code kv_cache_index} sources
 * before starting it (bench/vllm-replay.sh).
 *
 * <p>Modes: {@code kv-aware} and {@code load-only} send every request through the router ({@code --router}); which
 * selection it runs is its configuration's (the index, or a {@code selection_strategy}), and {@code --label} names
 * the row. {@code round-robin}, {@code oracle} and {@code oracle-ttft} send each request straight to a server: the
 * next in turn, the one whose cache holds the longest prefix of the prompt (ties: the least prefill work queued),
 * or the one with the lowest simulated time to first token ({@link KvReplay#longestPrefix},
 * {@link KvReplay#lowestTtft}). {@code bound} runs no server.
 *
 * <p>The oracles read the true cache state a request will meet, not a late one: a server tokenizes and serves its
 * requests one at a time, in arrival order, and on a loaded machine its cache can trail the sends by many
 * requests. So the harness keeps, per server, a {@link Shadow}: the same {@link PrefixCache} (same capacity, same
 * LRU) and {@link PrefillQueue} (same cost) fed with each request the oracle sends there, at its send time. Since
 * the server admits the same prompts in the same order, the shadow holds what the server's cache will hold when it
 * serves the request, and its queue what the request will wait for.
 */
final class VllmReplay {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Tokens per KV block: the servers' {@code --block-size} and the router's {@code block_size}. */
    static final int BLOCK_SIZE = 16;

    private VllmReplay() {
    }

    static KvReplay.Result run(KvReplay.Args a, PrintStream log) throws Exception {
        MooncakeTrace trace = MooncakeTrace.read(a.trace(), a.requests());
        long perTokenNanos = KvReplay.perTokenNanos(a, trace);
        if (a.mode() == KvReplay.Mode.BOUND) {
            return KvReplay.bound(a, trace, perTokenNanos);
        }
        Files.createDirectories(a.root());
        SimVllmServer.Options options = new SimVllmServer.Options(a.model(), a.tokenizer(), BLOCK_SIZE, a.kvBlocks(),
                VllmKvGeneration.MAP, "", Duration.ZERO, Duration.ofNanos(perTokenNanos));
        List<SimVllmServer> servers = new ArrayList<>();
        try (SimTokenizer tokenizer = SimTokenizer.load(a.tokenizer())) {
            for (int i = 0; i < a.workers(); i++) {
                servers.add(SimVllmServer.start("127.0.0.1", a.frontendPort() == 0 ? 0 : a.frontendPort() + i,
                        options, tokenizer));
            }
            listServers(a.root(), servers);
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
            if (a.mode().viaRouter) {
                awaitRouter(a, client, log);
            }
            ServeCounters.Stats[] baseline = servers.stream().map(SimVllmServer::stats)
                    .toArray(ServeCounters.Stats[]::new);
            log.printf(Locale.ROOT, "replaying %d requests (%.0f s of trace) %.1fx faster on %d vLLM servers, %s%n",
                    trace.requests().size(), trace.durationMs() / 1000.0, a.speedup(), servers.size(), a.rowLabel());
            IntFunction<String> bodies = KvReplay.bodies(a, trace, TraceText.forTokenizer(tokenizer));
            int[][] oracleTokens = KvReplay.tokensAhead(a, trace, bodies, tokenizer);
            Shadow[] shadows = new Shadow[servers.size()];
            for (int s = 0; s < shadows.length; s++) {
                shadows[s] = new Shadow(new PrefixCache(a.kvBlocks()), new PrefillQueue(Duration.ZERO,
                        Duration.ofNanos(perTokenNanos)));
            }
            TraceSender.Outcome o = TraceSender.replay(trace, a.speedup(), client, bodies, (i, request) -> {
                URI target = switch (a.mode()) {
                    case KV_AWARE, LOAD_ONLY -> Objects.requireNonNull(a.router());
                    case ORACLE, ORACLE_TTFT -> servers.get(oraclePick(a.mode(), shadows, oracleTokens[i])).baseUrl();
                    default -> servers.get(i % servers.size()).baseUrl();
                };
                request.uri(target.resolve("/v1/chat/completions"));
            });
            long lagMax = 0;
            long lagTotal = 0;
            for (SimVllmServer s : servers) {
                long[] lag = s.serveLag();
                lagMax = Math.max(lagMax, lag[0]);
                lagTotal += lag[1];
            }
            long served = servers.stream().mapToLong(SimVllmServer::requests).sum();
            KvReplay.printAhead(tokenizer, log);
            log.printf(Locale.ROOT, "servers' serving lag (arrival to served: tokenizing; KV events trail arrivals by "
                    + "it): mean %.0f ms, longest %.0f ms (wall)%n", lagTotal / 1e6 / Math.max(1, served), lagMax / 1e6);
            return result(a, servers, baseline, o, perTokenNanos);
        } finally {
            servers.forEach(SimVllmServer::close);
        }
    }

    /** One server's state as its requests so far will leave it (see the class comment); the sending thread's only. */
    private record Shadow(PrefixCache cache, PrefillQueue queue) {
    }

    /** The oracle's server for {@code tokens}, whose shadow then admits the prompt as the server will. */
    private static int oraclePick(KvReplay.Mode mode, Shadow[] shadows, int[] tokens) {
        long now = System.nanoTime();
        TokenBlocks blocks = TokenBlocks.of(tokens, BLOCK_SIZE);
        KvReplay.Held[] held = new KvReplay.Held[shadows.length];
        for (int s = 0; s < held.length; s++) {
            held[s] = new KvReplay.Held(shadows[s].cache().cachedPrefix(blocks), shadows[s].queue().pendingTokens(now));
        }
        int pick = mode == KvReplay.Mode.ORACLE ? KvReplay.longestPrefix(held)
                : KvReplay.lowestTtft(held, tokens.length, BLOCK_SIZE);
        int cached = shadows[pick].cache().admit(blocks).cached();
        shadows[pick].queue().admit(now, tokens.length - Math.min(tokens.length, (long) cached * BLOCK_SIZE));
        return pick;
    }

    /** {@code root/servers.txt}, written whole (through a temporary file) so a reader never sees half of it. */
    private static void listServers(Path root, List<SimVllmServer> servers) throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < servers.size(); i++) {
            SimVllmServer s = servers.get(i);
            lines.append("vllm-").append(i).append(' ').append(s.baseUrl()).append(' ').append(s.kvEndpoint())
                    .append(' ').append(s.replayEndpoint()).append('\n');
        }
        Path tmp = root.resolve("servers.txt.tmp");
        Files.writeString(tmp, lines, StandardCharsets.UTF_8);
        Files.move(tmp, root.resolve("servers.txt"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
    }

    private static KvReplay.Result result(KvReplay.Args a, List<SimVllmServer> servers,
            ServeCounters.Stats[] baseline, TraceSender.Outcome o, long perTokenNanos) {
        long prompt = 0;
        long cached = 0;
        long[] perServer = new long[servers.size()];
        List<long[]> ttfts = new ArrayList<>();
        for (int i = 0; i < servers.size(); i++) {
            ServeCounters.Stats s = servers.get(i).stats();
            ServeCounters.Stats b = baseline[i];
            perServer[i] = s.requests() - b.requests();
            prompt += s.promptTokens() - b.promptTokens();
            cached += s.cachedTokens() - b.cachedTokens();
            ttfts.add(Arrays.copyOfRange(s.ttftNanos(), b.ttftNanos().length, s.ttftNanos().length));
        }
        long[] sorted = ttfts.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        double mean = Arrays.stream(perServer).sum() / (double) perServer.length;
        double maxShare = mean == 0 ? 0 : Arrays.stream(perServer).max().orElse(0) / mean;
        return new KvReplay.Result(a.rowLabel(), o.sent(), o.failed(), prompt == 0 ? 0 : cached / (double) prompt,
                KvReplay.traceMs(sorted, 0.50, a.speedup()), KvReplay.traceMs(sorted, 0.90, a.speedup()),
                KvReplay.traceMs(sorted, 0.99, a.speedup()), perServer, maxShare, perTokenNanos * a.speedup() / 1000.0,
                o.maxLagNanos() / 1e6, -1, -1, -1);
    }

    /**
     * Waits until the router answers a chat request and, when its configuration lists KV sources, shows every
     * source {@code connected} and has made a KV selection (its first requests fetch and load the pinned tokenizer;
     * until then the strategy picks). The probe prompt is shorter than one KV block: it caches nothing.
     */
    private static void awaitRouter(KvReplay.Args a, HttpClient client, PrintStream log) throws Exception {
        URI router = Objects.requireNonNull(a.router());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<Void> probe = client.send(HttpRequest.newBuilder(router.resolve("/v1/chat/completions"))
                        .header("content-type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(KvReplay.body(a.model(), "hi", 1))).build(),
                        HttpResponse.BodyHandlers.discarding());
                last = "probe status " + probe.statusCode();
                if (probe.statusCode() == 200) {
                    if (a.mode() != KvReplay.Mode.KV_AWARE) {
                        log.println("router ready: " + last);
                        return;
                    }
                    HttpResponse<String> admin = client.send(HttpRequest.newBuilder(
                            router.resolve("/admin/dynamo/workers")).header("authorization", "Bearer "
                            + a.adminToken()).build(), HttpResponse.BodyHandlers.ofString());
                    JsonNode sources = JSON.readTree(admin.body()).findPath("kv_cache_index_sources");
                    int connected = 0;
                    for (JsonNode s : sources) {
                        connected += s.path("state").asText().equals("connected") ? 1 : 0;
                    }
                    double selections = KvReplay.metric(client, router, "continuum_kv_cache_index_selections_total",
                            "result=\"cached\"") + KvReplay.metric(client, router,
                            "continuum_kv_cache_index_selections_total", "result=\"uncached\"");
                    last += ", " + connected + " of " + a.workers() + " sources connected, " + (long) selections
                            + " KV selections";
                    if (connected >= a.workers() && selections > 0) {
                        log.println("router ready: " + last);
                        return;
                    }
                }
            } catch (IOException e) {
                last = e.toString();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
        }
        throw new IllegalStateException("the router at " + router + " did not become ready in 120 s: " + last);
    }
}
