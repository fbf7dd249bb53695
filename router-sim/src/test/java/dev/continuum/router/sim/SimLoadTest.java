package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
 * Request-driven load through the fleet's frontend: slots and queueing, KV blocks that follow a request's
 * tokens, and the scripted misbehaviours (silence, stall) with their undo. A stall holds requests where a test
 * needs them, so nothing here depends on how fast the machine is.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SimLoadTest {
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private SimFleet fleet;
    private final HttpClient client = HttpClient.newHttpClient();

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
    }

    /** {@code workers} aggregated one-rank workers, 16-token KV blocks, answers of {@code chunks} tokens. */
    private SimFleet start(int workers, int slots, int chunks, long chunkDelayMs) throws Exception {
        fleet = SimFleet.start(SimFleet.Options.defaults(root, "m").withWorkers(0, workers).withSlots(slots)
                .withFrontend("127.0.0.1", 0, chunks, chunkDelayMs).withPublishInterval(Duration.ofMillis(20)));
        return fleet;
    }

    private CompletableFuture<HttpResponse<String>> send(SimWorker w, String body) {
        return client.sendAsync(HttpRequest.newBuilder(URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", Long.toUnsignedString(w.instanceId()))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A streamed request body of exactly {@code bytes} ASCII bytes. */
    private static String body(int bytes) {
        String head = "{\"stream\":true,\"messages\":[],\"pad\":\"";
        String tail = "\"}";
        return head + "x".repeat(bytes - head.length() - tail.length()) + tail;
    }

    /** The simulator's prompt estimate (four bytes a token) in 16-token blocks. */
    private static long promptBlocks(int bytes) {
        long tokens = (bytes + 3) / 4;
        return (tokens + 15) / 16;
    }

    @Test
    void requestsBeyondTheSlotsQueueAndRunInTurn() throws Exception {
        start(1, 2, 3, 5);
        SimWorker w = fleet.worker(0);
        w.stall();
        List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            answers.add(send(w, body(640)));
        }
        await().atMost(PATIENCE).until(() -> w.inFlight() == 5);
        assertThat(w.running()).isEqualTo(2);
        assertThat(w.queued()).isEqualTo(3);
        // Only the running requests hold KV; the queued ones hold none yet.
        assertThat(w.kvUsedBlocks()).isEqualTo(2 * promptBlocks(640));

        w.resume();
        for (CompletableFuture<HttpResponse<String>> a : answers) {
            HttpResponse<String> r = a.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).contains("tok2", "data: [DONE]");
        }
        await().atMost(PATIENCE).until(() -> w.inFlight() == 0);
        assertThat(w.kvUsedBlocks()).isZero();
    }

    @Test
    void kvBlocksFillWithThePromptGrowWithEachTokenAndDrainAtTheEnd() throws Exception {
        start(1, 4, 64, 50);
        SimWorker w = fleet.worker(0);
        w.stall();
        CompletableFuture<HttpResponse<String>> answer = send(w, body(1600));
        await().atMost(PATIENCE).until(() -> w.running() == 1);
        long prompt = promptBlocks(1600);
        assertThat(prompt).isEqualTo(25);
        assertThat(w.kvUsedBlocks()).isEqualTo(prompt);

        // The 401st token needs a 26th block. A stall mid-answer freezes the KV where it got to.
        w.resume();
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(10)).until(() -> w.kvUsedBlocks() > prompt);
        w.stall();
        long frozen = w.kvUsedBlocks();
        assertThat(frozen).isBetween(prompt + 1, promptBlocks(1600 + 4 * 64));
        assertThat(answer).isNotDone();

        w.resume();
        assertThat(answer.get(30, TimeUnit.SECONDS).body()).contains("tok63", "data: [DONE]");
        await().atMost(PATIENCE).until(() -> w.kvUsedBlocks() == 0);
        assertThat(w.inFlight()).isZero();
    }

    @Test
    void aStalledWorkerAcceptsButAnswersNothingUntilResumedWhileOthersServe() throws Exception {
        start(2, 4, 4, 5);
        SimWorker stalled = fleet.worker(0);
        SimWorker healthy = fleet.worker(1);
        stalled.stall();
        assertThat(stalled.stalled()).isTrue();
        CompletableFuture<HttpResponse<String>> unanswered = send(stalled, body(200));
        await().atMost(PATIENCE).until(() -> stalled.inFlight() == 1);
        assertThat(fleet.frontend().served(stalled.instanceId())).isEqualTo(1);

        HttpResponse<String> other = send(healthy, body(200)).get(30, TimeUnit.SECONDS);
        assertThat(other.statusCode()).isEqualTo(200);
        // The healthy worker's whole answer came and went; the stalled one has not sent even its head.
        assertThat(unanswered).isNotDone();
        assertThat(stalled.kvUsedBlocks()).isEqualTo(promptBlocks(200));

        stalled.resume();
        assertThat(stalled.stalled()).isFalse();
        HttpResponse<String> late = unanswered.get(30, TimeUnit.SECONDS);
        assertThat(late.statusCode()).isEqualTo(200);
        assertThat(late.body()).contains("tok3", "data: [DONE]");
    }

    @Test
    void aSilencedWorkerPublishesNothingButStillServesUntilUnsilenced() throws Exception {
        start(2, 4, 2, 0);
        SimWorker quiet = fleet.worker(0);
        SimWorker loud = fleet.worker(1);
        quiet.silence();
        // A publish cycle that began before the silence may still count: wait for the other worker to move on.
        long loudAtSilence = loud.publishedSamples();
        await().atMost(PATIENCE).until(() -> loud.publishedSamples() >= loudAtSilence + 3);
        long quietBefore = quiet.publishedSamples();
        long loudBefore = loud.publishedSamples();
        await().atMost(PATIENCE).until(() -> loud.publishedSamples() >= loudBefore + 10);
        assertThat(quiet.publishedSamples()).isEqualTo(quietBefore);
        assertThat(quiet.silenced()).isTrue();

        assertThat(send(quiet, body(100)).get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

        quiet.unsilence();
        await().atMost(PATIENCE).until(() -> quiet.publishedSamples() > quietBefore);
    }

    @Test
    void aScriptAppliesEachMisbehaviourAndUndoesItWhenItsTimeIsUp() throws Exception {
        start(2, 4, 2, 0);
        try (Script script = Script.start(fleet, List.of(
                Misbehaviour.parse(Misbehaviour.Kind.SILENCE, "0@0+3"),
                Misbehaviour.parse(Misbehaviour.Kind.STALL, "1@0.1+3")))) {
            await().atMost(PATIENCE).pollInterval(Duration.ofMillis(20))
                    .until(() -> fleet.worker(0).silenced() && fleet.worker(1).stalled());
            await().atMost(PATIENCE).until(() -> !fleet.worker(0).silenced() && !fleet.worker(1).stalled());
        }
        try (Script forever = Script.start(fleet, List.of(Misbehaviour.parse(Misbehaviour.Kind.STALL, "1@0")))) {
            await().atMost(PATIENCE).until(() -> fleet.worker(1).stalled());
        }
    }
}
