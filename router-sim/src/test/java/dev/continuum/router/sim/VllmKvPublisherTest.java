package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A caching worker with {@link SimKv#vllmEvents()} on publishes vLLM's own KV events: a JeroMQ SUB sees
 * {@code [topic, seq, batch]} live, and a real libzmq DEALER (python3-zmq) asks the replay socket for everything
 * from 0 the way vLLM's consumers do, decoding each batch with python3-msgpack and checking it against the
 * layout of vllm/distributed/kv_events.py for the generation asked for.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VllmKvPublisherTest {
    private static final int BLOCK = 4;
    private static final String CLIENT = """
            import json, sys, msgpack, zmq
            ctx = zmq.Context()
            s = ctx.socket(zmq.DEALER)
            s.connect(sys.argv[1])
            s.send_multipart([b"", (0).to_bytes(8, "big")])
            while True:
                frames = s.recv_multipart()
                assert frames[0] == b""
                frames = frames[1:]
                seq = int.from_bytes(frames[-2], "big", signed=True)
                if seq == -1:
                    break
                batch = msgpack.unpackb(frames[-1], raw=False)
                print(json.dumps({"frames": len(frames), "seq": seq, "batch": batch}))
            """;
    private final ZContext zmq = new ZContext(1);
    private final ObjectMapper json = new ObjectMapper();

    @AfterEach
    void stop() {
        zmq.close();
    }

    private static int[] tokens(int first, int count) {
        return IntStream.range(first, first + count).toArray();
    }

    @ParameterizedTest
    @EnumSource(VllmKvGeneration.class)
    void publishesStoredAndRemovedBatchesLiveAndOnReplay(VllmKvGeneration generation) throws Exception {
        SimKv kv = new SimKv(Path.of("tokenizer.json"), null, Duration.ZERO, Duration.ZERO).withVllmEvents(generation);
        // Two blocks of capacity: the third prompt block evicts.
        try (WorkerKv w = new WorkerKv(zmq, 1, 2, 1, BLOCK, 2, kv, Runnable::run);
             ZMQ.Socket sub = zmq.createSocket(SocketType.SUB)) {
            VllmKvPublisher p = w.vllm();
            assertThat(p).isNotNull();
            sub.subscribe(new byte[0]);
            sub.connect(p.endpoint());
            // A PUB drops what it sends before the subscription lands: serve until the subscriber sees a batch.
            int[] probe = {0};
            await().until(() -> {
                w.serve(0, tokens(10_000 + probe[0]++ * 8, 8), 0);
                byte[] topic = sub.recv(ZMQ.DONTWAIT);
                if (topic == null) {
                    return false;
                }
                assertThat(topic).isEmpty();
                assertThat(sub.recv()).hasSize(8);
                assertThat(sub.recv()).isNotEmpty();
                return true;
            });
            // A new prompt evicts the last one (two blocks of capacity): removed, then stored.
            w.serve(0, tokens(50_000, 8), 0);
            w.clear();
            // The publisher's thread sends in its own time: replay until the last batch, the clear, is kept.
            List<List<JsonNode>> last = new ArrayList<>();
            await().until(() -> {
                List<JsonNode> r = replay(p.replayEndpoint());
                last.add(0, r);
                return !r.isEmpty() && r.get(r.size() - 1).toString().contains("AllBlocksCleared");
            });
            List<JsonNode> replies = last.get(0);
            long expected = 0;
            boolean sawStored = false;
            boolean sawRemoved = false;
            boolean sawCleared = false;
            for (JsonNode r : replies) {
                assertThat(r.get("seq").asLong()).isEqualTo(expected++);
                // [seq, batch] before 0.26; [topic, seq, batch] after.
                assertThat(r.get("frames").asInt()).isEqualTo(generation == VllmKvGeneration.MAP ? 3 : 2);
                JsonNode batch = r.get("batch");
                JsonNode event;
                if (generation == VllmKvGeneration.ARRAY) {
                    assertThat(batch.isArray()).isTrue();
                    assertThat(batch.size()).isEqualTo(3);
                    event = batch.get(1).get(0);
                    String tag = event.get(0).asText();
                    switch (tag) {
                        case "BlockStored" -> {
                            sawStored = true;
                            assertThat(event.size()).isEqualTo(7);
                            assertThat(event.get(3).size()).isEqualTo(event.get(1).size() * BLOCK);
                            assertThat(event.get(4).asInt()).isEqualTo(BLOCK);
                        }
                        case "BlockRemoved" -> sawRemoved = true;
                        case "AllBlocksCleared" -> sawCleared = true;
                        default -> throw new AssertionError(tag);
                    }
                } else {
                    assertThat(batch.isObject()).isTrue();
                    assertThat(batch.get("data_parallel_rank").asInt()).isZero();
                    event = batch.get("events").get(0);
                    String tag = event.get("type").asText();
                    switch (tag) {
                        case "BlockStored" -> {
                            sawStored = true;
                            assertThat(event.get("token_ids").size())
                                    .isEqualTo(event.get("block_hashes").size() * BLOCK);
                            assertThat(event.get("kv_cache_spec_kind").asText()).isEqualTo("full_attention");
                            assertThat(event.has("lora_name")).isTrue();
                        }
                        case "BlockRemoved" -> sawRemoved = true;
                        case "AllBlocksCleared" -> sawCleared = true;
                        default -> throw new AssertionError(tag);
                    }
                }
            }
            assertThat(sawStored).isTrue();
            assertThat(sawRemoved).isTrue();
            assertThat(sawCleared).isTrue();
        }
    }

    private List<JsonNode> replay(String endpoint) throws IOException, InterruptedException {
        Process py = new ProcessBuilder("/usr/bin/python3", "-c", CLIENT, endpoint)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(py.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(py.waitFor()).isZero();
        List<JsonNode> rows = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                rows.add(json.readTree(line));
            }
        }
        return rows;
    }
}
