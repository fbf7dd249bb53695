package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/**
 * A worker's KV side: the simulated time to first token (prefill cost of the uncached tokens plus the rank's
 * queue, on explicit arrival times), and the kv-events it publishes (stored, removed on eviction, cleared) as a
 * real libzmq subscriber (python3-zmq) receives them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WorkerKvTest {
    private static final long MS = 1_000_000;
    private static final int BLOCK = 4;
    /** 10 ms per prefill plus 1 µs per uncached token. */
    private static final SimKv KV = new SimKv(Path.of("tokenizer.json"), null, Duration.ofMillis(10),
            Duration.ofNanos(1_000));

    private final ZContext zmq = new ZContext(1);

    @AfterEach
    void stop() {
        zmq.close();
    }

    private WorkerKv worker(int dpSize, long capacity) {
        return new WorkerKv(zmq, 77, 4242, dpSize, BLOCK, capacity, KV, Runnable::run);
    }

    private static int[] tokens(int first, int count) {
        return IntStream.range(first, first + count).toArray();
    }

    @Test
    void timeToFirstTokenIsThePrefillOfTheUncachedTokensAfterTheRanksQueue() {
        try (WorkerKv w = worker(2, 1000)) {
            // Idle, nothing cached: 10 ms + 40 tokens x 1 µs.
            assertThat(w.serve(0, tokens(0, 40), 0).ttftNanos()).isEqualTo(10 * MS + 40_000);
            // Same prompt at the same instant: fully cached, but it waits for the first prefill to end.
            WorkerKv.Served again = w.serve(0, tokens(0, 40), 0);
            assertThat(again.cachedTokens()).isEqualTo(40);
            assertThat(again.ttftNanos()).isEqualTo(10 * MS + 40_000 + 10 * MS);
            // The other rank has its own queue and cache.
            assertThat(w.serve(1, tokens(0, 40), 0).ttftNanos()).isEqualTo(10 * MS + 40_000);
            // Later, idle again; 8 cached blocks of 10, and 2 tokens past the last complete block.
            WorkerKv.Served partial = w.serve(0, concat(tokens(0, 32), tokens(500, 10)), 100 * MS);
            assertThat(partial.cachedTokens()).isEqualTo(32);
            assertThat(partial.ttftNanos()).isEqualTo(10 * MS + 10_000);

            ServeCounters.Stats stats = w.stats();
            assertThat(stats.requests()).isEqualTo(4);
            assertThat(stats.promptTokens()).isEqualTo(40 + 40 + 40 + 42);
            assertThat(stats.cachedTokens()).isEqualTo(40 + 32);
            assertThat(stats.ttftNanos()).hasSize(4);
        }
    }

    @Test
    void aPromptArrivingDuringAnotherPrefillWaitsForItWhateverItsSize() {
        try (WorkerKv w = worker(1, 1000)) {
            w.serve(0, tokens(0, 4000), 0); // busy until 14 ms
            assertThat(w.prefillEnd(0)).isEqualTo(14 * MS);
            assertThat(w.serve(0, tokens(100_000, 4), 5 * MS).ttftNanos()).isEqualTo(9 * MS + 10 * MS + 4_000);
        }
    }

    @Test
    void thePendingPrefillTokensAreTheRanksRemainingPrefillOverTheCostPerToken() {
        SimKv reporting = new SimKv(Path.of("tokenizer.json"), null, Duration.ZERO, Duration.ofNanos(1_000), true);
        try (WorkerKv w = new WorkerKv(zmq, 77, 4242, 2, BLOCK, 1000, reporting, Runnable::run)) {
            assertThat(w.reportsPrefillBacklog()).isTrue();
            assertThat(w.pendingPrefillTokens(0, 0)).isZero(); // never prefilled
            w.serve(0, tokens(0, 400), 0); // 400 uncached tokens: busy until 400 µs
            w.serve(0, tokens(0, 400), 0); // cached: adds nothing
            w.serve(0, tokens(1000, 200), 100_000); // queued behind: busy until 600 µs
            assertThat(w.pendingPrefillTokens(0, 100_000)).isEqualTo(500);
            assertThat(w.pendingPrefillTokens(0, 599_500)).isEqualTo(1); // a started token counts
            assertThat(w.pendingPrefillTokens(0, 600_000)).isZero();
            assertThat(w.pendingPrefillTokens(1, 100_000)).isZero(); // the other rank's queue
            // Accepted and still being tokenized: its estimate counts until it is served, then its real prefill.
            w.announce(1, 300);
            w.announce(1, 50);
            assertThat(w.pendingPrefillTokens(1, 700_000)).isEqualTo(350);
            w.serve(1, tokens(0, 280), 700_000, 300);
            assertThat(w.pendingPrefillTokens(1, 700_000)).isEqualTo(50 + 280);
            w.withdraw(1, 50);
            assertThat(w.pendingPrefillTokens(1, 980_000)).isZero();
        }
        try (WorkerKv w = worker(1, 1000)) {
            assertThat(w.reportsPrefillBacklog()).isFalse();
        }
    }

    @Test
    void storedRemovedOnEvictionAndClearedReachALibzmqSubscriberInOrder() throws Exception {
        try (WorkerKv w = worker(2, 4); PythonKvEvents sub = PythonKvEvents.subscribe(w.endpoint())) {
            await().atMost(Duration.ofSeconds(20)).until(sub::ready);
            // A subscription takes a moment to reach the publisher: prompts on rank 1 until one arrives.
            AtomicInteger probe = new AtomicInteger();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
                w.serve(1, tokens(1_000_000 + probe.getAndIncrement() * BLOCK, BLOCK), 0);
                return !sub.messages().isEmpty();
            });
            int skip = sub.messages().size();
            int[] a = tokens(0, 3 * BLOCK);
            int[] b = tokens(5000, 3 * BLOCK);
            TokenBlocks ab = TokenBlocks.of(a, BLOCK);
            TokenBlocks bb = TokenBlocks.of(b, BLOCK);

            w.serve(0, a, 0);
            w.serve(0, b, 0); // capacity 4: a's last two blocks go
            w.clear();

            await().atMost(Duration.ofSeconds(20)).until(() -> rank0(sub.messages()).size() >= 4);
            List<JsonNode> events = rank0(sub.messages());
            assertThat(events).allSatisfy(m -> assertThat(m.path("error").isMissingNode()).as(m.toString()).isTrue());
            assertThat(events).extracting(m -> m.at("/envelope/payload/event/event_id").asLong())
                    .containsExactly(0L, 1L, 2L, 3L);
            assertThat(events).extracting(m -> m.at("/envelope/payload/worker_id").asLong()).containsOnly(4242L);
            JsonNode storedA = events.get(0).at("/envelope/payload/event/data/stored");
            assertThat(storedA.get("parent_hash").isNull()).isTrue();
            assertThat(hashes(storedA.get("blocks"), "block_hash")).containsExactly(unsigned(ab.seqHashes()));
            assertThat(hashes(storedA.get("blocks"), "tokens_hash")).containsExactly(unsigned(ab.tokenHashes()));
            assertThat(hashes(events.get(1).at("/envelope/payload/event/data/removed/block_hashes"), null))
                    .containsExactly(unsigned(ab.seqHashes()[2], ab.seqHashes()[1]));
            JsonNode storedB = events.get(2).at("/envelope/payload/event/data/stored");
            assertThat(hashes(storedB.get("blocks"), "block_hash")).containsExactly(unsigned(bb.seqHashes()));
            assertThat(events.get(3).at("/envelope/payload/event/data").asText()).isEqualTo("cleared");
            // Rank 1 was cleared too (it held the probes), with its own event_id sequence.
            await().atMost(Duration.ofSeconds(20)).until(() -> sub.messages().stream().anyMatch(m ->
                    m.at("/envelope/payload/event/dp_rank").asInt() == 1
                            && m.at("/envelope/payload/event/data").asText().equals("cleared")));
            // The envelope sequence counts every message of the publisher, both ranks.
            List<JsonNode> all = sub.messages().subList(skip, sub.messages().size());
            for (int i = 1; i < all.size(); i++) {
                assertThat(all.get(i).get("sequence").asLong()).isEqualTo(all.get(i - 1).get("sequence").asLong() + 1);
            }
        }
    }

    @Test
    void aPromptOfMoreThan128NewBlocksIsStoredInChainedBatches() throws Exception {
        try (WorkerKv w = worker(2, 1000); PythonKvEvents sub = PythonKvEvents.subscribe(w.endpoint())) {
            await().atMost(Duration.ofSeconds(20)).until(sub::ready);
            AtomicInteger probe = new AtomicInteger();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
                w.serve(1, tokens(1_000_000 + probe.getAndIncrement() * BLOCK, BLOCK), 0);
                return !sub.messages().isEmpty();
            });
            int[] prompt = tokens(0, 300 * BLOCK);
            TokenBlocks blocks = TokenBlocks.of(prompt, BLOCK);

            w.serve(0, prompt, 0);

            await().atMost(Duration.ofSeconds(20)).until(() -> rank0(sub.messages()).size() >= 3);
            List<JsonNode> stored = rank0(sub.messages()).stream()
                    .map(m -> m.at("/envelope/payload/event/data/stored")).toList();
            assertThat(stored).extracting(s -> s.get("blocks").size()).containsExactly(128, 128, 44);
            assertThat(stored).extracting(s -> s.get("start_position").asInt()).containsExactly(0, 128, 256);
            assertThat(stored.get(1).get("parent_hash").asText()).isEqualTo(Long.toUnsignedString(blocks.seqHashes()[127]));
            assertThat(stored.get(2).get("parent_hash").asText()).isEqualTo(Long.toUnsignedString(blocks.seqHashes()[255]));
        }
    }

    private static List<JsonNode> rank0(List<JsonNode> messages) {
        return messages.stream().filter(m -> m.at("/envelope/payload/event/dp_rank").asInt() == 0).toList();
    }

    private static List<String> hashes(JsonNode array, String field) {
        return java.util.stream.StreamSupport.stream(array.spliterator(), false)
                .map(n -> field == null ? n.asText() : n.get(field).asText()).toList();
    }

    private static String[] unsigned(long... values) {
        return java.util.Arrays.stream(values).mapToObj(Long::toUnsignedString).toArray(String[]::new);
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }
}
