package dev.continuum.router.sim;

import java.util.Arrays;
import java.util.List;

/**
 * {@code java -jar continuum-sim.jar upstream [--host H] [--port P] [--models a,b] [--chunks N]
 * [--chunk-delay-ms D]}: runs an OpenAI-wire upstream until interrupted.
 *
 * <p>{@code java -jar continuum-sim.jar fleet --root DIR [--namespace NS] [--model M] [--prefill N] [--decode N]
 * [--host H] [--port P] [--chunks N] [--chunk-delay-ms D]}: runs a simulated Dynamo fleet registered in the file
 * store at {@code DIR} (Dynamo's {@code DYN_FILE_KV}) and its direct-mode frontend until interrupted.
 */
public final class SimMain {
    private SimMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("fleet")) {
            fleet(args);
            return;
        }
        if (args.length == 0 || !args[0].equals("upstream")) {
            System.err.println("usage: continuum-sim upstream [--host 127.0.0.1] [--port 8000] [--models demo-model]"
                    + " [--chunks 8] [--chunk-delay-ms 0]\n"
                    + "       continuum-sim fleet --root DIR [--namespace dynamo] [--model demo-model] [--prefill 2]"
                    + " [--decode 2] [--host 127.0.0.1] [--port 8001] [--chunks 16] [--chunk-delay-ms 50]");
            System.exit(2);
        }
        String host = "127.0.0.1";
        int port = 8000;
        List<String> models = List.of("demo-model");
        int chunks = 8;
        long delayMs = 0;
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + ": missing value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--host" -> host = v;
                case "--port" -> port = Integer.parseInt(v);
                case "--models" -> models = Arrays.stream(v.split(",")).map(String::trim).toList();
                case "--chunks" -> chunks = Integer.parseInt(v);
                case "--chunk-delay-ms" -> delayMs = Long.parseLong(v);
                default -> throw new IllegalArgumentException(args[i] + ": unknown option");
            }
        }
        OpenAiUpstream upstream = OpenAiUpstream.start(host, port, models, chunks, delayMs);
        System.out.println("continuum-sim upstream listening on " + upstream.address() + " models=" + models);
        Runtime.getRuntime().addShutdownHook(new Thread(upstream::close, "sim-shutdown"));
        Thread.currentThread().join();
    }

    private static void fleet(String[] args) throws Exception {
        java.nio.file.Path root = null;
        String namespace = "dynamo";
        String model = "demo-model";
        int prefill = 2;
        int decode = 2;
        String host = "127.0.0.1";
        int port = 8001;
        int chunks = 16;
        long delayMs = 50;
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + ": missing value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--root" -> root = java.nio.file.Path.of(v);
                case "--namespace" -> namespace = v;
                case "--model" -> model = v;
                case "--prefill" -> prefill = Integer.parseInt(v);
                case "--decode" -> decode = Integer.parseInt(v);
                case "--host" -> host = v;
                case "--port" -> port = Integer.parseInt(v);
                case "--chunks" -> chunks = Integer.parseInt(v);
                case "--chunk-delay-ms" -> delayMs = Long.parseLong(v);
                default -> throw new IllegalArgumentException(args[i] + ": unknown option");
            }
        }
        if (root == null) {
            throw new IllegalArgumentException("--root: missing (expected: the file store directory, DYN_FILE_KV)");
        }
        SimFleet.Options d = SimFleet.Options.defaults(root, model);
        SimFleet fleet = SimFleet.start(new SimFleet.Options(root, namespace, model, prefill, decode,
                d.totalKvBlocks(), d.kvCacheBlockSize(), d.maxNumBatchedTokens(), d.heartbeat(),
                d.publishInterval(), host, port, chunks, delayMs));
        System.out.println("continuum-sim fleet in " + root + ", frontend " + fleet.frontendUrl());
        fleet.describe().forEach(line -> System.out.println("  " + line));
        Runtime.getRuntime().addShutdownHook(new Thread(fleet::close, "sim-shutdown"));
        Thread.currentThread().join();
    }
}
