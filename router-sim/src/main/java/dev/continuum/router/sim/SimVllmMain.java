package dev.continuum.router.sim;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;

/**
 * {@code java -jar continuum-sim.jar vllm --tokenizer tokenizer.json [--host 127.0.0.1] [--port 8000]
 * [--model Qwen/Qwen3-0.6B] [--kv-blocks 4096] [--block-size 16] [--encoding map|array] [--topic ""]
 * [--prefill-base-ms 2] [--prefill-us-per-token 20]}: runs one simulated plain vLLM server ({@link SimVllmServer})
 * until interrupted, and prints its URL and its KV-event PUB and replay endpoints, which a router's
 * {@code dynamo.kv_cache_index.sources[]} entry names as {@code endpoint} and {@code replay_endpoint}.
 */
final class SimVllmMain {
    private SimVllmMain() {
    }

    static void run(String[] args) throws InterruptedException {
        String host = "127.0.0.1";
        int port = 8000;
        String model = "Qwen/Qwen3-0.6B";
        Path tokenizer = null;
        long blocks = 4096;
        int blockSize = 16;
        VllmKvGeneration generation = VllmKvGeneration.MAP;
        String topic = "";
        double baseMs = 2;
        double usPerToken = 20;
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + ": missing value");
            }
            String v = args[i + 1];
            switch (args[i]) {
                case "--host" -> host = v;
                case "--port" -> port = Integer.parseInt(v);
                case "--model" -> model = v;
                case "--tokenizer" -> tokenizer = Path.of(v);
                case "--kv-blocks" -> blocks = Long.parseLong(v);
                case "--block-size" -> blockSize = Integer.parseInt(v);
                case "--encoding" -> generation = VllmKvGeneration.valueOf(v.toUpperCase(Locale.ROOT));
                case "--topic" -> topic = v;
                case "--prefill-base-ms" -> baseMs = Double.parseDouble(v);
                case "--prefill-us-per-token" -> usPerToken = Double.parseDouble(v);
                default -> throw new IllegalArgumentException(args[i] + ": unknown option");
            }
        }
        if (tokenizer == null) {
            throw new IllegalArgumentException("--tokenizer: required (the model's tokenizer.json)");
        }
        SimVllmServer.Options options = new SimVllmServer.Options(model, tokenizer, blockSize, blocks, generation,
                topic, Duration.ofNanos((long) (baseMs * 1_000_000)), Duration.ofNanos((long) (usPerToken * 1_000)));
        SimVllmServer server = SimVllmServer.start(host, port, options);
        System.out.println("vllm " + server.baseUrl() + " kv_events " + server.kvEndpoint() + " replay "
                + server.replayEndpoint());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        stopped.await();
    }
}
