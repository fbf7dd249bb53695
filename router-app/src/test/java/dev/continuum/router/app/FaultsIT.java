package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults with real processes (docs/reliability.md, "Faults"): the router's shaded jar and the simulator's jar
 * run as separate OS processes and are killed or signalled as an orchestrator would.
 *
 * <p>What a streaming client may see when something dies under it: the whole stream (with {@code [DONE]}),
 * or a stream that ends in an error (the connection closes without the chunked terminator, so the client's
 * read fails). Never a clean end that hides the loss: a response that ends normally without {@code [DONE]}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class FaultsIT {
    private static final String MODEL = "demo-model";

    @TempDir
    Path dir;

    private final HttpClient client = HttpClient.newHttpClient();
    private final List<Process> processes = new ArrayList<>();
    private TestUpstream upstream;

    @AfterEach
    void stop() {
        processes.forEach(Process::destroyForcibly);
        if (upstream != null) {
            upstream.close();
        }
    }

    /**
     * The direct-mode shim (the simulator's frontend, with its workers) is SIGKILLed while a pinned stream is
     * flowing: the client's stream must end in an error, not in a clean end.
     */
    @Test
    void aShimKilledMidStreamEndsTheClientsStreamInAnError() throws Exception {
        int shimPort = FreePorts.next();
        Path store = Files.createDirectories(dir.resolve("store"));
        // 600 tokens 50 ms apart: a 30 s stream, so it is surely still flowing when the shim dies.
        Process shim = start("sim", "java", "-jar", System.getProperty("continuum.sim.jar"), "fleet",
                "--root", store.toString(), "--model", MODEL, "--prefill", "1", "--decode", "1",
                "--port", Integer.toString(shimPort), "--chunks", "600", "--chunk-delay-ms", "50");
        int port = FreePorts.next();
        URI base = startRouter(port, """
                server:
                  bind_address: "127.0.0.1:%d"
                backends:
                  - {name: frontend, url: "http://127.0.0.1:%d", models: ["%s"]}
                disaggregated_serving: {enabled: true, fallback_to_unified: false}
                health_checks: {enabled: false}
                admin:
                  auth: {method: none}
                dynamo:
                  enabled: true
                  discovery:
                    source: file
                    file: {root: "%s", namespaces: [dynamo], rescan_interval: 100ms}
                  load:
                    direct_allow_cidrs: ["127.0.0.0/8"]
                  shim:
                    backends: [frontend]
                """.formatted(port, shimPort, MODEL, store));

        // Pinned through the shim once the fleet is discovered and its load is in.
        InputStream body = await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> {
            HttpResponse<InputStream> r = client.send(chat(base, true), HttpResponse.BodyHandlers.ofInputStream());
            if (r.statusCode() != 200 || r.headers().firstValue("x-continuum-worker-instance-id").isEmpty()) {
                r.body().close();
                return null;
            }
            return r.body();
        }, b -> b != null);
        BufferedReader lines = new BufferedReader(new InputStreamReader(body, StandardCharsets.UTF_8));
        String first;
        do {
            first = lines.readLine();
        } while (first != null && !first.startsWith("data: "));
        assertThat(first).as("a first token before the kill").isNotNull().doesNotContain("[DONE]");

        shim.destroyForcibly(); // SIGKILL: no FIN-after-last-chunk, no goodbye
        assertThat(shim.waitFor(30, TimeUnit.SECONDS)).isTrue();

        StreamEnd end = drain(lines);
        assertThat(end.sawDone()).as("no [DONE] after the shim died").isFalse();
        assertThat(end.failed()).as("the stream ends in an error, never a clean end").isTrue();
    }

    /**
     * SIGTERM with eight streams in flight and a 3 s grace: the four the upstream finishes inside the grace
     * complete with {@code [DONE]}; the four it never finishes end in an error when the grace runs out; the
     * process exits on its own.
     */
    @Test
    void sigtermWithStreamsInFlightCompletesOrFailsEachAndExitsWithinTheGrace() throws Exception {
        upstream = TestUpstream.start("faults").models("m").defaultReply(Reply.controlledStream());
        int port = FreePorts.next();
        URI base = startRouter(port, """
                server:
                  bind_address: "127.0.0.1:%d"
                  shutdown_grace_period: 3s
                backends:
                  - {name: main, url: "%s", models: [m]}
                health_checks: {enabled: false}
                """.formatted(port, upstream.baseUrl()));
        Process router = processes.get(processes.size() - 1);

        List<CompletableFuture<StreamEnd>> clients = new ArrayList<>();
        List<StreamHandle> streams = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            clients.add(client.sendAsync(HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                    HttpResponse.BodyHandlers.ofInputStream())
                    .thenApply(r -> drain(new BufferedReader(new InputStreamReader(r.body(),
                            StandardCharsets.UTF_8)))));
            StreamHandle stream = upstream.awaitStream(Duration.ofSeconds(30));
            assertThat(stream).as("stream %d reached the upstream", i).isNotNull();
            stream.send("{\"n\":" + i + "}");
            streams.add(stream);
        }

        router.destroy(); // SIGTERM
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                assertThat(Files.readString(dir.resolve("router.log"))).contains("shutting down"));
        for (int i = 0; i < 4; i++) {
            streams.get(i).send("{\"last\":" + i + "}");
            streams.get(i).finish();
        }

        // Exits on its own once the grace is over (3 s, plus the stop of everything behind the server).
        assertThat(router.waitFor(60, TimeUnit.SECONDS)).as("the router exited").isTrue();
        for (int i = 0; i < 8; i++) {
            StreamEnd end = clients.get(i).get(30, TimeUnit.SECONDS);
            if (i < 4) {
                assertThat(end.sawDone()).as("stream %d finished inside the grace", i).isTrue();
                assertThat(end.failed()).as("stream %d", i).isFalse();
                assertThat(end.text()).contains("{\"last\":" + i + "}");
            } else {
                assertThat(end.sawDone()).as("stream %d was never finished", i).isFalse();
                assertThat(end.failed()).as("stream %d ends in an error, never a clean end", i).isTrue();
            }
        }
        assertThat(Files.readString(dir.resolve("router.log"))).contains("stopped");
    }

    /** How a client's read of an SSE body ended. */
    private record StreamEnd(boolean sawDone, boolean failed, String text) {
    }

    private static StreamEnd drain(BufferedReader lines) {
        StringBuilder text = new StringBuilder();
        boolean done = false;
        try (lines) {
            for (String line; (line = lines.readLine()) != null; ) {
                text.append(line).append('\n');
                done |= line.equals("data: [DONE]");
            }
            return new StreamEnd(done, false, text.toString());
        } catch (IOException e) { // the chunked body ended without its terminator
            return new StreamEnd(done, true, text.toString());
        }
    }

    private HttpRequest chat(URI base, boolean stream) {
        return HttpRequest.newBuilder(base.resolve("/v1/chat/completions"))
                .header("content-type", "application/json")
                .header("x-backend", "") // asks the router to disclose its pins in the response head
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"stream\":" + stream
                        + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build();
    }

    private URI startRouter(int port, String yaml) throws Exception {
        Path config = dir.resolve("config.yaml");
        Files.writeString(config, yaml);
        start("router", "java", "-jar", System.getProperty("continuum.jar"), "serve", "--config", config.toString());
        URI base = URI.create("http://127.0.0.1:" + port);
        await().atMost(Duration.ofSeconds(60)).ignoreExceptionsInstanceOf(ConnectException.class)
                .until(() -> client.send(HttpRequest.newBuilder(base.resolve("/health")).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200);
        return base;
    }

    private Process start(String name, String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile()).start();
        processes.add(p);
        return p;
    }
}
