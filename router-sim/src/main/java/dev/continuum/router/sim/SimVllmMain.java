package dev.continuum.router.sim;

import java.nio.file.Path;
import java.time.Duration;
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
        Duration base = Duration.ofMillis(2);
        Duration perToken = Duration.ofNanos(20_000);
        for (SimArgs.Option o : SimArgs.of(args)) {
            String v = o.value();
            switch (o.name()) {
                case "--host" -> host = v;
                case "--port" -> port = o.intValue();
                case "--model" -> model = v;
                case "--tokenizer" -> tokenizer = o.path();
                case "--kv-blocks" -> blocks = o.longValue();
                case "--block-size" -> blockSize = o.intValue();
                case "--encoding" -> generation = switch (v) {
                    case "map" -> VllmKvGeneration.MAP;
                    case "array" -> VllmKvGeneration.ARRAY;
                    default -> throw o.invalid("map, array");
                };
                case "--topic" -> topic = v;
                case "--prefill-base-ms" -> base = o.millis();
                case "--prefill-us-per-token" -> perToken = o.micros();
                default -> throw o.unknown();
            }
        }
        if (tokenizer == null) {
            throw new IllegalArgumentException("--tokenizer: required (the model's tokenizer.json)");
        }
        SimVllmServer.Options options = new SimVllmServer.Options(model, tokenizer, blockSize, blocks, generation,
                topic, base, perToken);
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
