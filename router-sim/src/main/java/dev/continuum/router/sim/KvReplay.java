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
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.jspecify.annotations.Nullable;

/**
 * {@code continuum-sim replay}: replays a Mooncake trace against a simulated fleet with prefix caches and reports
 * the prompt-token cache hit rate, the simulated time to first token and the requests per worker, as a Markdown
 * table row (docs/benchmarks.md, "KV replay"; bench/kv-replay.sh runs every mode).
 *
 * <p>Modes: {@code kv-aware} and {@code load-only} send every request, unpinned, through a router
 * ({@code --router}) configured for that mode in front of this fleet; {@code round-robin}, {@code oracle} and
 * {@code oracle-ttft} pin each request at the fleet's frontend themselves: the next worker in turn, the worker
 * whose cache holds the longest prefix of the prompt (ties: the worker whose prefill queue empties first), or
 * the worker whose simulated time to first token is lowest. {@code bound} runs no fleet: it reports what no
 * placement can beat, every earlier prompt's blocks cached and no request ever queued ({@link #bound}).
 *
 * <p>Time: the trace's arrivals are replayed {@code speedup} times faster; the prefill cost per token is chosen
 * so that the whole trace, with no cache hit at all, would keep the fleet {@code utilisation} busy; times to first
 * token are reported in trace milliseconds (the simulated wall time times {@code speedup}).
 */
public final class KvReplay {
    /** What to compare. */
    public enum Mode {
        KV_AWARE("kv-aware", true), LOAD_ONLY("load-only", true), ROUND_ROBIN("round-robin", false),
        ORACLE("oracle", false), ORACLE_TTFT("oracle-ttft", false), BOUND("bound", false);

        final String label;
        final boolean viaRouter;

        Mode(String label, boolean viaRouter) {
            this.label = label;
            this.viaRouter = viaRouter;
        }

        static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.label.equals(s)) {
                    return m;
                }
            }
            throw new IllegalArgumentException("--mode: " + s + " (expected: kv-aware, load-only, round-robin, "
                    + "oracle, oracle-ttft or bound)");
        }
    }

    /** What is replayed against: the Dynamo fleet behind its frontend, or plain vLLM servers ({@link VllmReplay}). */
    enum Fleet {
        DYNAMO, VLLM
    }

    /**
     * The command's options; docs/benchmarks.md lists them. {@code label} names the row instead of the mode (the
     * router's strategy, for a plain-backend replay through the router). {@code decodeMs}: how long each answer runs
     * after its first token (its blocks stay in use on its worker meanwhile, so decode load builds up); 0 ends it
     * at once. {@code stream}: requests ask for a streamed answer, so the router sees each one's first token when it
     * comes (a whole answer's bytes come only at its end: until then the router counts its prompt as prefill work).
     */
    record Args(Path trace, Path tokenizer, @Nullable Path tokenizerConfig, Mode mode, @Nullable URI router,
                String adminToken, Path root, int frontendPort, int workers, int requests, double speedup,
                double utilisation, long kvBlocks, int maxPromptTokens, @Nullable Path out, String model,
                boolean prefillBacklog, boolean kvEvents, Fleet fleet, @Nullable String label, long decodeMs,
                boolean stream) {
        String rowLabel() {
            return label != null ? label : mode.label;
        }
    }

    /**
     * One mode's figures. {@code simAvoidable} and {@code simAvoidableNotBusier}: the simulator's own count of prompt
     * tokens served uncached although another rank held them ({@link KvServing#avoidableTokens}), -1 without a
     * fleet; {@code routerAvoidable}: the router's {@code avoidable_prefill_tokens} total, -1 when not routed.
     */
    record Result(String label, int sent, int failed, double hitRate, double p50Ms, double p90Ms, double p99Ms,
                  long[] perWorker, double maxShare, double perTokenTraceUs, double maxLagMs, long simAvoidable,
                  long simAvoidableNotBusier, long routerAvoidable) {
        String row() {
            return String.format(Locale.ROOT, "| %s | %d | %d | %.3f | %.0f | %.0f | %.0f | %.2f | %s |", label,
                    sent, failed, hitRate, p50Ms, p90Ms, p99Ms, maxShare, perWorker.length == 0 ? "(no fleet)"
                            : String.join(" ", Arrays.stream(perWorker).mapToObj(Long::toString).toList()));
        }
    }

    static final String HEADER = "| mode | requests | failed | hit rate | TTFT p50 (ms) | TTFT p90 (ms) "
            + "| TTFT p99 (ms) | max share / mean | requests per worker |\n|---|---|---|---|---|---|---|---|---|";

    private static final ObjectMapper JSON = new ObjectMapper();

    private KvReplay() {
    }

    static Args parse(String[] args) {
        Path trace = null;
        Path tokenizer = null;
        Path tokenizerConfig = null;
        Mode mode = null;
        URI router = null;
        String token = "replay";
        Path root = null;
        int frontendPort = 0;
        int workers = 8;
        int requests = Integer.MAX_VALUE;
        double speedup = 10;
        double utilisation = 0.7;
        long kvBlocks = 16_384;
        int maxPrompt = 100_000;
        Path out = null;
        String model = "Qwen/Qwen3-0.6B";
        boolean prefillBacklog = true;
        boolean kvEvents = true;
        Fleet fleet = Fleet.DYNAMO;
        String label = null;
        long decodeMs = 0;
        boolean stream = false;
        for (SimArgs.Option o : SimArgs.of(args)) {
            String v = o.value();
            switch (o.name()) {
                case "--trace" -> trace = o.path();
                case "--tokenizer" -> tokenizer = o.path();
                case "--tokenizer-config" -> tokenizerConfig = o.path();
                case "--mode" -> mode = Mode.parse(v);
                case "--router" -> router = URI.create(v);
                case "--admin-token" -> token = v;
                case "--root" -> root = o.path();
                case "--frontend-port" -> frontendPort = o.intValue();
                case "--workers" -> workers = o.intValue();
                case "--requests" -> requests = o.intValue();
                case "--speedup" -> speedup = o.doubleValue();
                case "--utilisation" -> utilisation = o.doubleValue();
                case "--kv-blocks" -> kvBlocks = o.longValue();
                case "--max-prompt-tokens" -> maxPrompt = o.intValue();
                case "--out" -> out = o.path();
                case "--model" -> model = v;
                case "--label" -> label = v;
                case "--decode-ms" -> decodeMs = o.longValue();
                case "--stream" -> stream = o.onOff();
                case "--fleet" -> fleet = switch (v) {
                    case "dynamo" -> Fleet.DYNAMO;
                    case "vllm" -> Fleet.VLLM;
                    default -> throw o.invalid("dynamo, vllm");
                };
                case "--prefill-backlog" -> prefillBacklog = o.onOff();
                case "--kv-events" -> kvEvents = o.onOff();
                default -> throw o.unknown();
            }
        }
        if (trace == null || tokenizer == null || mode == null || root == null) {
            throw new IllegalArgumentException("--trace, --tokenizer, --mode and --root are required");
        }
        if (mode.viaRouter && router == null) {
            throw new IllegalArgumentException("--router: required by --mode " + mode.label);
        }
        if (workers < 1 || requests < 1 || !(speedup > 0) || !(utilisation > 0) || maxPrompt < 1) {
            throw new IllegalArgumentException("--workers, --requests, --speedup, --utilisation and "
                    + "--max-prompt-tokens must be positive");
        }
        if (decodeMs < 0 || decodeMs > 600_000) {
            throw new IllegalArgumentException("--decode-ms: 0..600000, not " + decodeMs);
        }
        return new Args(trace, tokenizer, tokenizerConfig, mode, router, token, root, frontendPort, workers, requests,
                speedup, utilisation, kvBlocks, maxPrompt, out, model, prefillBacklog, kvEvents, fleet, label, decodeMs,
                stream);
    }

    static void main(String[] args, PrintStream out) throws Exception {
        Args a = parse(args);
        Result r = a.fleet() == Fleet.VLLM ? VllmReplay.run(a, out) : run(a, out);
        out.println(HEADER);
        out.println(r.row());
        out.printf(Locale.ROOT, "prefill %.1f µs per uncached token (trace time); largest send lag %.0f ms%n",
                r.perTokenTraceUs(), r.maxLagMs());
        if (r.simAvoidable() >= 0) {
            out.printf(Locale.ROOT, "avoidable prefill tokens: simulator %d (another rank held them), %d (a rank "
                    + "no busier held them); router %s%n", r.simAvoidable(), r.simAvoidableNotBusier(),
                    r.routerAvoidable() < 0 ? "n/a" : Long.toString(r.routerAvoidable()));
        }
        if (a.out() != null) {
            Files.writeString(a.out(), r.row() + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }

    static Result run(Args a, PrintStream log) throws Exception {
        MooncakeTrace trace = MooncakeTrace.read(a.trace(), a.requests());
        long perTokenNanos = perTokenNanos(a, trace);
        if (a.mode() == Mode.BOUND) {
            return bound(a, trace, perTokenNanos);
        }
        SimKv kv = new SimKv(a.tokenizer(), a.tokenizerConfig(), Duration.ZERO, Duration.ofNanos(perTokenNanos),
                a.prefillBacklog()).withKvEvents(a.kvEvents());
        Files.createDirectories(a.root());
        try (SimFleet fleet = SimFleet.start(SimFleet.Options.defaults(a.root(), a.model()).withWorkers(0, a.workers())
                .withFrontend("127.0.0.1", a.frontendPort(), a.decodeMs() > 0 ? 2 : 1, a.decodeMs()).withSlots(4096)
                .withKvCache(a.kvBlocks(), 16).withPublishInterval(Duration.ofMillis(20)).withKv(kv))) {
            KvServing serving = Objects.requireNonNull(fleet.kvServing(), "started with KV");
            TraceText text = TraceText.forTokenizer(serving.tokenizer());
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
            if (a.mode().viaRouter) {
                awaitRouter(a, client, log);
            }
            List<SimWorker> workers = fleet.workers();
            long[] baseline = workers.stream().mapToLong(w -> w.kvStats().orElseThrow().requests()).toArray();
            log.printf(Locale.ROOT, "replaying %d requests (%.0f s of trace) %.1fx faster, mode %s%n",
                    trace.requests().size(), trace.durationMs() / 1000.0, a.speedup(), a.mode().label);

            // The oracle needs each prompt's tokens at its send time: tokenized ahead, off the replay's clock.
            IntFunction<String> bodies = bodies(a, trace, text);
            int[][] oracleTokens = tokensAhead(a, trace, bodies, serving.tokenizer());
            TraceSender.Outcome o = TraceSender.replay(trace, a.speedup(), client, bodies, (i, request) -> {
                if (a.mode().viaRouter) {
                    request.uri(Objects.requireNonNull(a.router()).resolve("/v1/chat/completions"));
                    return;
                }
                SimWorker pick = switch (a.mode()) {
                    case ORACLE, ORACLE_TTFT -> {
                        long now = serving.now();
                        Held[] held = workers.stream().map(w -> held(w, oracleTokens[i], now)).toArray(Held[]::new);
                        int blockSize = Objects.requireNonNull(workers.get(0).kv()).blockSize();
                        yield workers.get(a.mode() == Mode.ORACLE ? longestPrefix(held)
                                : lowestTtft(held, oracleTokens[i].length, blockSize));
                    }
                    default -> workers.get(i % workers.size());
                };
                request.uri(URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                        .header("x-dynamo-worker-instance-id", Long.toUnsignedString(pick.instanceId()));
            });
            printAhead(serving.tokenizer(), log);
            long routerAvoidable = a.mode().viaRouter ? routerAvoidable(a, client, log) : -1;
            if (a.mode().viaRouter) {
                // Request by request: the router forwards each record's id upstream, the simulator kept its count by it.
                AvoidablePairing.pair(serving.avoidable(), AvoidablePairing.routerFigures(client,
                        Objects.requireNonNull(a.router()), a.adminToken())).print(log);
            }
            return result(a, workers, baseline, o.sent(), o.failed(), perTokenNanos * a.speedup() / 1000.0,
                    o.maxLagNanos() / 1e6, serving, routerAvoidable);
        }
    }

    /**
     * The prefill cost per token that makes the whole trace, with no cache hit at all, keep {@code workers} engines
     * {@code utilisation} busy at the replay's speed.
     */
    static long perTokenNanos(Args a, MooncakeTrace trace) {
        long tokens = trace.requests().stream().mapToLong(r -> Math.min(r.inputLength(), a.maxPromptTokens())).sum();
        double wallNanos = trace.durationMs() * 1e6 / a.speedup();
        return Math.max(1, Math.round(a.utilisation() * a.workers() * wallNanos / Math.max(1, tokens)));
    }

    /** Each request's chat body, made when asked (at its send time: the bodies of a whole trace are large). */
    static IntFunction<String> bodies(Args a, MooncakeTrace trace, TraceText text) {
        return i -> body(a.model(), text.prompt(trace.requests().get(i), a.maxPromptTokens()),
                trace.requests().get(i).outputLength(), a.stream());
    }

    /**
     * Each prompt's token IDs, tokenized in parallel ahead of the replay, off its clock: for the oracle modes (they
     * read them at send time), and for every mode when the fleet is to serve from them
     * ({@link SimTokenizer#aheadRequested}); none otherwise.
     */
    static int[][] tokensAhead(Args a, MooncakeTrace trace, IntFunction<String> bodies, SimTokenizer tokenizer) {
        boolean serve = SimTokenizer.aheadRequested();
        if (a.mode() != Mode.ORACLE && a.mode() != Mode.ORACLE_TTFT && !serve) {
            return new int[0][];
        }
        return tokenizer.tokenizeAhead(trace.requests().size(), bodies, serve);
    }

    /** What the fleet served from the IDs tokenized ahead, when it did. */
    static void printAhead(SimTokenizer tokenizer, PrintStream log) {
        if (SimTokenizer.aheadRequested()) {
            long[] c = tokenizer.aheadCounts();
            log.printf(Locale.ROOT, "simulator: %d prompts served with IDs tokenized before the replay, %d tokenized "
                    + "while served%n", c[0], c[1]);
        }
    }

    /**
     * What the oracles read of one engine at a request's send time, from the simulator's own state: the leading
     * blocks of the prompt its cache holds, and the prefill work queued on it in tokens, counting the requests it
     * accepted that the simulator is still tokenizing ({@link PrefillQueue#pendingTokens}).
     */
    record Held(int blocks, long pendingTokens) {
    }

    private static Held held(SimWorker w, int[] tokens, long now) {
        WorkerKv kv = Objects.requireNonNull(w.kv(), "a caching worker");
        return new Held(kv.cachedPrefix(0, tokens), kv.pendingPrefillTokens(0, now));
    }

    /**
     * The hit-rate oracle of issue 14: the engine whose cache holds the longest prefix of the prompt; ties go to the
     * engine with the least prefill work queued (reading only the served queue, every tie went to the first engine
     * whenever tokenizing lagged behind the sends). It maximises each request's hit, not the fleet's balance.
     */
    static int longestPrefix(Held[] engines) {
        int best = 0;
        for (int i = 1; i < engines.length; i++) {
            Held h = engines[i];
            Held b = engines[best];
            if (h.blocks() > b.blocks() || (h.blocks() == b.blocks() && h.pendingTokens() < b.pendingTokens())) {
                best = i;
            }
        }
        return best;
    }

    /**
     * The TTFT oracle: the engine whose simulated time to first token for the prompt is lowest (its queued prefill
     * tokens plus the prompt's uncached tokens, all at one cost per token); ties go to the longer cached prefix.
     * Greedy per request: it can still fill a queue that a later request would have wanted.
     */
    static int lowestTtft(Held[] engines, int promptTokens, int blockSize) {
        int best = -1;
        long bestCost = Long.MAX_VALUE;
        int bestBlocks = -1;
        for (int i = 0; i < engines.length; i++) {
            Held h = engines[i];
            long cost = h.pendingTokens() + Math.max(0, promptTokens - (long) h.blocks() * blockSize);
            if (cost < bestCost || (cost == bestCost && h.blocks() > bestBlocks)) {
                best = i;
                bestCost = cost;
                bestBlocks = h.blocks();
            }
        }
        return best;
    }

    /**
     * What no placement can beat on this trace and cost model: each prompt's longest prefix of trace blocks
     * (512 tokens each) seen in any earlier prompt counts as cached, as if every worker held every block ever
     * prefilled, and no request waits: its time to first token is its uncached tokens at the fleet's cost per
     * token. Token counts are the trace's (prompts cut at {@code --max-prompt-tokens}), not the rendered
     * prompts', so this is close to the replayed figures rather than identical.
     */
    static Result bound(Args a, MooncakeTrace trace, long perTokenNanos) {
        PrefixSet seen = new PrefixSet();
        long prompt = 0;
        long cached = 0;
        long[] ttft = new long[trace.requests().size()];
        for (int i = 0; i < ttft.length; i++) {
            MooncakeTrace.Request r = trace.requests().get(i);
            long isl = Math.min(r.inputLength(), a.maxPromptTokens());
            long hit = Math.min(isl, (long) seen.longestPrefix(r.hashIds()) * MooncakeTrace.TRACE_BLOCK_TOKENS);
            seen.add(r.hashIds());
            prompt += isl;
            cached += hit;
            ttft[i] = (isl - hit) * perTokenNanos;
        }
        Arrays.sort(ttft);
        return new Result(a.rowLabel(), ttft.length, 0, prompt == 0 ? 0 : cached / (double) prompt,
                traceMs(ttft, 0.50, a.speedup()), traceMs(ttft, 0.90, a.speedup()), traceMs(ttft, 0.99, a.speedup()),
                new long[0], 0, perTokenNanos * a.speedup() / 1000.0, 0, -1, -1, -1);
    }

    /** Prefixes of hash-ID chains, each keyed by its parent's key and its last ID. */
    private static final class PrefixSet {
        private final java.util.Map<List<Long>, Long> keys = new java.util.HashMap<>();

        int longestPrefix(long[] ids) {
            long parent = -1;
            for (int i = 0; i < ids.length; i++) {
                Long key = keys.get(List.of(parent, ids[i]));
                if (key == null) {
                    return i;
                }
                parent = key;
            }
            return ids.length;
        }

        void add(long[] ids) {
            long parent = -1;
            for (long id : ids) {
                parent = keys.computeIfAbsent(List.of(parent, id), k -> (long) keys.size());
            }
        }
    }

    static String body(String model, String prompt, int outputLength) {
        return body(model, prompt, outputLength, false);
    }

    static String body(String model, String prompt, int outputLength, boolean stream) {
        var root = JSON.createObjectNode().put("model", model).put("max_tokens", Math.max(1, outputLength));
        if (stream) {
            root.put("stream", true);
        }
        root.putArray("messages").addObject().put("role", "user").put("content", prompt);
        try {
            return JSON.writeValueAsString(root);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The router's running total of avoidable prefill tokens (its decision records' counter); the whole totals
     * line (records by result, scored prompt tokens, overlaps) is logged, since only KV-scored decisions count.
     */
    private static long routerAvoidable(Args a, HttpClient client, PrintStream log) throws Exception {
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(Objects.requireNonNull(a.router())
                        .resolve("/admin/dynamo/decisions?limit=1")).header("authorization", "Bearer " + a.adminToken())
                .build(), HttpResponse.BodyHandlers.ofString());
        JsonNode totals = JSON.readTree(r.body()).path("totals");
        log.println("router decision totals: " + totals);
        return r.statusCode() == 200 && totals.has("avoidable_prefill_tokens")
                ? totals.get("avoidable_prefill_tokens").asLong() : -1;
    }

    private static Result result(Args a, List<SimWorker> workers, long[] baseline, int sent, int failed,
            double perTokenTraceUs, double maxLagMs, KvServing serving, long routerAvoidable) {
        long prompt = 0;
        long cached = 0;
        long[] perWorker = new long[workers.size()];
        List<Long> ttfts = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            SimWorker.KvStats s = workers.get(i).kvStats().orElseThrow();
            long[] t = s.ttftNanos();
            int skip = (int) baseline[i];
            perWorker[i] = s.requests() - skip;
            for (int k = skip; k < t.length; k++) {
                ttfts.add(t[k]);
            }
            prompt += s.promptTokens();
            cached += s.cachedTokens();
        }
        long[] sorted = ttfts.stream().mapToLong(Long::longValue).sorted().toArray();
        double mean = Arrays.stream(perWorker).sum() / (double) perWorker.length;
        double maxShare = mean == 0 ? 0 : Arrays.stream(perWorker).max().orElse(0) / mean;
        return new Result(a.rowLabel(), sent, failed, prompt == 0 ? 0 : cached / (double) prompt,
                traceMs(sorted, 0.50, a.speedup()), traceMs(sorted, 0.90, a.speedup()),
                traceMs(sorted, 0.99, a.speedup()), perWorker, maxShare, perTokenTraceUs, maxLagMs,
                serving.avoidableTokens(), serving.avoidableNotBusierTokens(), routerAvoidable);
    }

    /** Nearest-rank percentile, in trace milliseconds. */
    static double traceMs(long[] sorted, double q, double speedup) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank))] * speedup / 1e6;
    }

    /**
     * Waits until the router lists every worker with connected subscriptions (kv_metrics, plus kv-events for the
     * kv-aware mode), has loaded the pinned tokenizer (kv-aware mode: its warm-up does so before any request), and
     * answers a chat request. The probe prompt is shorter than one KV block: it caches nothing.
     */
    private static void awaitRouter(Args a, HttpClient client, PrintStream log) throws Exception {
        URI router = Objects.requireNonNull(a.router());
        int wantConnected = a.mode() == Mode.KV_AWARE && a.kvEvents() ? 2 * a.workers() : a.workers();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        String last = "no answer";
        while (System.nanoTime() < deadline) {
            try {
                HttpResponse<String> admin = client.send(HttpRequest.newBuilder(router.resolve("/admin/dynamo/workers"))
                        .header("authorization", "Bearer " + a.adminToken()).build(),
                        HttpResponse.BodyHandlers.ofString());
                JsonNode view = JSON.readTree(admin.body());
                int listed = view.path("workers").size();
                int connected = countConnected(view);
                last = "status " + admin.statusCode() + ", " + listed + " workers, " + connected + " connected";
                boolean tokenizer = a.mode() != Mode.KV_AWARE || tokenizerLoaded(client, router);
                if (!tokenizer) {
                    last += ", tokenizer not loaded";
                }
                if (listed >= a.workers() && connected >= wantConnected && tokenizer) {
                    HttpResponse<Void> probe = client.send(HttpRequest.newBuilder(
                            router.resolve("/v1/chat/completions")).header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body(a.model(), "hi", 1))).build(),
                            HttpResponse.BodyHandlers.discarding());
                    if (probe.statusCode() == 200) {
                        log.println("router ready: " + last);
                        return;
                    }
                    last += ", probe status " + probe.statusCode();
                }
            } catch (IOException e) {
                last = e.toString();
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
        }
        throw new IllegalStateException("the router at " + router + " did not become ready in 90 s: " + last);
    }

    /** Whether the router's /metrics counts a loaded tokenizer ({@code continuum_dynamo_kv_tokenizer_loads_total}). */
    private static boolean tokenizerLoaded(HttpClient client, URI router) throws Exception {
        return metric(client, router, "continuum_dynamo_kv_tokenizer_loads_total", "result=\"loaded\"") >= 1;
    }

    /** The sum of the router's {@code name} series whose labels contain {@code label}, from its /metrics. */
    static double metric(HttpClient client, URI router, String name, String label) throws Exception {
        String metrics = client.send(HttpRequest.newBuilder(router.resolve("/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        double sum = 0;
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + "{") && line.contains(label)) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static int countConnected(JsonNode node) {
        int n = node.isObject() && node.path("state").asText().equals("connected") ? 1 : 0;
        for (JsonNode child : node) {
            n += countConnected(child);
        }
        return n;
    }
}
