package dev.continuum.router.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code java -jar continuum-sim.jar upstream [--host H] [--port P] [--models a,b] [--chunks N]
 * [--chunk-delay-ms D]}: runs an OpenAI-wire upstream until interrupted.
 *
 * <p>{@code java -jar continuum-sim.jar fleet (--root DIR | --etcd URL[,URL...] | --kubernetes K8S_NAMESPACE
 * [--k8s-objects metadata|pods|all]) [--namespace NS] [--model M] [--prefill N] [--decode N] [--dp N]
 * [--pool SPEC]... [--slots N] [--kv-blocks N] [--block-size N] [--silence W@T[+D]]... [--stall W@T[+D]]...
 * [--host H] [--port P] [--chunks N] [--chunk-delay-ms D]}: runs a simulated Dynamo fleet and its direct-mode
 * frontend until interrupted; while it runs, standard input takes {@code silence N}, {@code unsilence N},
 * {@code stall N}, {@code resume N} and {@code status}. docs/simulator.md describes every option.
 */
public final class SimMain {
    private SimMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("fleet")) {
            fleet(args);
            return;
        }
        if (args.length > 0 && args[0].equals("vllm")) {
            SimVllmMain.run(args);
            return;
        }
        if (args.length > 0 && args[0].equals("replay")) {
            KvReplay.main(args, System.out);
            return;
        }
        if (args.length > 1 && args[0].equals("checksum")) {
            for (int i = 1; i < args.length; i++) {
                System.out.println(Blake3.checksum(java.nio.file.Path.of(args[i])) + "  " + args[i]);
            }
            return;
        }
        if (args.length == 0 || !args[0].equals("upstream")) {
            System.err.println("usage: continuum-sim upstream [--host 127.0.0.1] [--port 8000] [--models demo-model]"
                    + " [--chunks 8] [--chunk-delay-ms 0]\n"
                    + "       continuum-sim fleet (--root DIR | --etcd URL[,URL] | --kubernetes K8S_NAMESPACE"
                    + " [--k8s-objects metadata|pods|all])\n"
                    + "           [--namespace dynamo] [--model demo-model] [--prefill 2] [--decode 2] [--dp 1]\n"
                    + "           [--pool namespace=NS,model=M,role=prefill|decode|aggregated,workers=N,dp=N"
                    + "[,component=C]]...\n"
                    + "           [--slots 16] [--kv-blocks 8192] [--block-size 16] [--silence W@T[+D]]..."
                    + " [--stall W@T[+D]]...\n"
                    + "           [--host 127.0.0.1] [--port 8001] [--chunks 16] [--chunk-delay-ms 50]\n"
                    + "           [--tokenizer tokenizer.json [--tokenizer-config tokenizer_config.json]"
                    + " [--prefill-base-ms 20] [--prefill-us-per-token 50] [--kv-events on|off]]\n"
                    + "       continuum-sim replay --trace FILE --tokenizer FILE --root DIR"
                    + " --mode kv-aware|load-only|round-robin|oracle [--router URL] ... (docs/benchmarks.md)\n"
                    + "       continuum-sim vllm --tokenizer tokenizer.json [--host 127.0.0.1] [--port 8000]"
                    + " [--model M] [--kv-blocks 4096] [--block-size 16] [--encoding map|array] [--topic T]"
                    + " [--prefill-base-ms 2] [--prefill-us-per-token 20]\n"
                    + "       continuum-sim checksum FILE...");
            System.exit(2);
        }
        String host = "127.0.0.1";
        int port = 8000;
        List<String> models = List.of("demo-model");
        int chunks = 8;
        long delayMs = 0;
        for (SimArgs.Option o : SimArgs.of(args)) {
            String v = o.value();
            switch (o.name()) {
                case "--host" -> host = v;
                case "--port" -> port = o.intValue();
                case "--models" -> models = Arrays.stream(v.split(",")).map(String::trim).toList();
                case "--chunks" -> chunks = o.intValue();
                case "--chunk-delay-ms" -> delayMs = o.longValue();
                default -> throw o.unknown();
            }
        }
        OpenAiUpstream upstream = OpenAiUpstream.start(host, port, models, chunks, delayMs);
        System.out.println("continuum-sim upstream listening on " + upstream.address() + " models=" + models);
        Runtime.getRuntime().addShutdownHook(new Thread(upstream::close, "sim-shutdown"));
        Thread.currentThread().join();
    }

    /** What {@code fleet}'s options ask for. */
    record FleetArgs(SimFleet.Options options, List<Misbehaviour> script) {
    }

    @SuppressWarnings("NullAway") // a null store is SimFleet.Options' "file store at root" default
    static FleetArgs parseFleet(String[] args) {
        java.nio.file.Path root = null;
        Store store = null;
        String k8sNamespace = null;
        Store.KubernetesObjects objects = Store.KubernetesObjects.METADATA;
        String namespace = "dynamo";
        String model = "demo-model";
        int prefill = 2;
        int decode = 2;
        int dp = 1;
        List<Pool> pools = new ArrayList<>();
        List<Misbehaviour> script = new ArrayList<>();
        Integer slots = null;
        Long kvBlocks = null;
        Integer blockSize = null;
        String host = "127.0.0.1";
        int port = 8001;
        int chunks = 16;
        long delayMs = 50;
        java.nio.file.Path tokenizer = null;
        java.nio.file.Path tokenizerConfig = null;
        java.time.Duration prefillBase = java.time.Duration.ofMillis(20);
        java.time.Duration prefillPerToken = java.time.Duration.ofNanos(50_000);
        boolean kvEvents = true;
        for (SimArgs.Option o : SimArgs.of(args)) {
            String v = o.value();
            switch (o.name()) {
                case "--root" -> root = o.path();
                case "--etcd" -> store = new Store.Etcd(Arrays.stream(v.split(",")).map(String::trim).toList());
                case "--kubernetes" -> k8sNamespace = v;
                case "--k8s-objects" -> objects = Store.KubernetesObjects.valueOf(v.toUpperCase(Locale.ROOT));
                case "--namespace" -> namespace = v;
                case "--model" -> model = v;
                case "--prefill" -> prefill = o.intValue();
                case "--decode" -> decode = o.intValue();
                case "--dp" -> dp = o.intValue();
                case "--pool" -> pools.add(Pool.parse(v));
                case "--slots" -> slots = o.intValue();
                case "--kv-blocks" -> kvBlocks = o.longValue();
                case "--block-size" -> blockSize = o.intValue();
                case "--silence" -> script.add(Misbehaviour.parse(Misbehaviour.Kind.SILENCE, v));
                case "--stall" -> script.add(Misbehaviour.parse(Misbehaviour.Kind.STALL, v));
                case "--host" -> host = v;
                case "--port" -> port = o.intValue();
                case "--chunks" -> chunks = o.intValue();
                case "--chunk-delay-ms" -> delayMs = o.longValue();
                case "--tokenizer" -> tokenizer = o.path();
                case "--tokenizer-config" -> tokenizerConfig = o.path();
                case "--prefill-base-ms" -> prefillBase = o.millis();
                case "--prefill-us-per-token" -> prefillPerToken = o.micros();
                case "--kv-events" -> kvEvents = o.onOff();
                default -> throw o.unknown();
            }
        }
        if (tokenizer == null && tokenizerConfig != null) {
            throw new IllegalArgumentException("--tokenizer-config: needs --tokenizer (the prefix caches' tokenizer)");
        }
        int stores = (root == null ? 0 : 1) + (store == null ? 0 : 1) + (k8sNamespace == null ? 0 : 1);
        if (stores != 1) {
            throw new IllegalArgumentException("--root: missing (expected: exactly one of --root DIR, the file store "
                    + "directory (DYN_FILE_KV), --etcd URL[,URL...] or --kubernetes K8S_NAMESPACE)");
        }
        if (k8sNamespace != null) {
            store = Store.Kubernetes.defaultKubeconfig(k8sNamespace, objects);
        }
        // Only the defaults' values are read here; the store is the one chosen above.
        SimFleet.Options d = SimFleet.Options.defaults(java.nio.file.Path.of("."), model);
        SimFleet.Options options = new SimFleet.Options(root, namespace, model, prefill, decode,
                kvBlocks == null ? d.totalKvBlocks() : kvBlocks, blockSize == null ? d.kvCacheBlockSize() : blockSize,
                d.maxNumBatchedTokens(), d.heartbeat(), d.publishInterval(), host, port, chunks, delayMs, pools, store,
                slots == null ? d.slots() : slots);
        if (pools.isEmpty() && dp != 1) {
            int size = dp;
            options = options.withPools(options.effectivePools().stream().map(p -> p.withDp(size)).toList());
        }
        if (tokenizer != null) {
            options = options.withKv(new SimKv(tokenizer, tokenizerConfig, prefillBase, prefillPerToken)
                    .withKvEvents(kvEvents));
        }
        return new FleetArgs(options, List.copyOf(script));
    }

    private static void fleet(String[] args) throws Exception {
        FleetArgs parsed = parseFleet(args);
        SimFleet fleet = SimFleet.start(parsed.options());
        Script script = Script.start(fleet, parsed.script());
        System.out.println("continuum-sim fleet in " + describe(parsed.options().store()) + ", frontend "
                + fleet.frontendUrl());
        fleet.describe().forEach(line -> System.out.println("  " + line));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            script.close();
            fleet.close();
        }, "sim-shutdown"));
        Thread console = new Thread(() -> console(fleet), "sim-console");
        console.setDaemon(true);
        console.start();
        Thread.currentThread().join();
    }

    private static String describe(Store store) {
        if (store instanceof Store.File f) {
            return "the file store " + f.root();
        }
        if (store instanceof Store.Etcd e) {
            return "etcd " + String.join(",", e.endpoints());
        }
        Store.Kubernetes k = (Store.Kubernetes) store;
        return "Kubernetes namespace " + k.namespace() + " (" + k.objects().name().toLowerCase(Locale.ROOT) + ")";
    }

    private static final String COMMANDS = "commands: silence N, unsilence N, stall N, resume N, clear N, status";

    /** Commands on standard input until it ends: {@code silence|unsilence|stall|resume|clear N}, {@code status}. */
    private static void console(SimFleet fleet) {
        try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                java.nio.charset.StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] words = line.trim().split("\\s+");
                try {
                    if (words[0].equals("status")) {
                        status(fleet);
                        continue;
                    }
                    if (words.length != 2) {
                        System.out.println(COMMANDS);
                        continue;
                    }
                    SimWorker w = fleet.worker(Integer.parseInt(words[1]));
                    switch (words[0]) {
                        case "silence" -> w.silence();
                        case "unsilence" -> w.unsilence();
                        case "stall" -> w.stall();
                        case "resume" -> w.resume();
                        case "clear" -> w.clearKvCache();
                        default -> System.out.println(COMMANDS);
                    }
                } catch (RuntimeException e) {
                    System.out.println(line + ": " + e.getMessage());
                }
            }
        } catch (java.io.IOException e) {
            // No console: the script and the library calls still work.
        }
    }

    private static void status(SimFleet fleet) {
        for (int i = 0; i < fleet.workers().size(); i++) {
            SimWorker w = fleet.worker(i);
            System.out.printf(Locale.ROOT, "#%-3d %-24s running=%d queued=%d kv_used_blocks=%d%s%s%s%n", i, w.name(),
                    w.running(), w.queued(), w.kvUsedBlocks(), w.hasKvCache() ? " cached_blocks=" + w.cachedBlocks(0)
                            : "", w.silenced() ? " silenced" : "", w.stalled() ? " stalled" : "");
        }
    }
}
