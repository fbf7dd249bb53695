package dev.continuum.router.sim;

import java.util.Arrays;
import java.util.List;

/**
 * {@code java -jar continuum-sim.jar upstream [--host H] [--port P] [--models a,b] [--chunks N]
 * [--chunk-delay-ms D]}: runs an OpenAI-wire upstream until interrupted.
 */
public final class SimMain {
    private SimMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || !args[0].equals("upstream")) {
            System.err.println("usage: continuum-sim upstream [--host 127.0.0.1] [--port 8000] [--models demo-model]"
                    + " [--chunks 8] [--chunk-delay-ms 0]");
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
}
