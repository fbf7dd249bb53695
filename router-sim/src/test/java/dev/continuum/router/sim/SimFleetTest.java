package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The simulated fleet against upstream's formats, read with independent tools: the file store with plain file I/O and
 * Jackson, the kv_metrics stream with a JeroMQ SUB socket and msgpack.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimFleetTest {
    private static final ObjectMapper JSON = new ObjectMapper();

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

    private SimFleet start(SimFleet.Options options) throws Exception {
        fleet = SimFleet.start(options);
        return fleet;
    }

    @Test
    void registersEveryWorkerInTheFileStoreAsDynamoDoes() throws Exception {
        start(SimFleet.Options.defaults(root, "Qwen/Qwen3-0.6B"));
        assertThat(fleet.workers()).extracting(SimWorker::component)
                .containsExactly("prefill", "prefill", "decode", "decode");

        Map<String, JsonNode> instances = bucket("v1/instances");
        Map<String, JsonNode> cards = bucket("v1/mdc");
        Map<String, JsonNode> channels = bucket("v1/event_channels");
        assertThat(instances).hasSize(4);
        assertThat(cards).hasSize(4);
        assertThat(channels).hasSize(4);

        for (SimWorker w : fleet.workers()) {
            String key = "dynamo/" + w.component() + "/generate/" + Long.toHexString(w.instanceId());
            JsonNode endpoint = instances.get(key);
            assertThat(endpoint).as(key).isNotNull();
            assertThat(endpoint.get("type").asText()).isEqualTo("Endpoint");
            assertThat(endpoint.get("namespace").asText()).isEqualTo("dynamo");
            assertThat(endpoint.get("component").asText()).isEqualTo(w.component());
            assertThat(endpoint.get("endpoint").asText()).isEqualTo("generate");
            // A u64 decimal JSON number, exact even above 2^63.
            assertThat(endpoint.get("instance_id").bigIntegerValue().toString())
                    .isEqualTo(Long.toUnsignedString(w.instanceId()));
            assertThat(endpoint.get("transport").get("tcp").asText())
                    .endsWith("/" + Long.toHexString(w.instanceId()) + "/generate");

            JsonNode model = cards.get(key);
            assertThat(model.get("type").asText()).isEqualTo("Model");
            assertThat(model.get("instance_id").bigIntegerValue().toString())
                    .isEqualTo(Long.toUnsignedString(w.instanceId()));
            JsonNode card = model.get("card_json");
            assertThat(card.get("display_name").asText()).isEqualTo("Qwen/Qwen3-0.6B");
            assertThat(card.get("slug").asText()).isEqualTo("qwen_qwen3-0_6b");
            assertThat(card.get("kv_cache_block_size").asInt()).isEqualTo(16);
            assertThat(card.get("model_type").asText())
                    .isEqualTo(w.role() == DirectFrontend.Role.PREFILL ? "Prefill" : "Chat | Completions");
            JsonNode runtime = card.get("runtime_config");
            assertThat(runtime.get("total_kv_blocks").asLong()).isEqualTo(8192);
            assertThat(runtime.get("max_num_batched_tokens").asLong()).isEqualTo(8192);
            assertThat(runtime.get("data_parallel_size").asInt()).isEqualTo(1);

            String channelKey = "namespace/dynamo/component/" + w.component() + "/endpoint/generate/topic/kv_metrics/"
                    + Long.toHexString(w.publisherId());
            JsonNode channel = channels.get(channelKey);
            assertThat(channel).as(channelKey).isNotNull();
            assertThat(channel.get("type").asText()).isEqualTo("EventChannel");
            assertThat(channel.get("topic").asText()).isEqualTo("kv_metrics");
            assertThat(channel.get("scope").get("kind").asText()).isEqualTo("endpoint");
            assertThat(channel.get("scope").get("endpoint").get("component").asText()).isEqualTo(w.component());
            assertThat(channel.get("instance_id").bigIntegerValue().toString())
                    .isEqualTo(Long.toUnsignedString(w.publisherId()));
            assertThat(channel.get("transport").get("kind").asText()).isEqualTo("Zmq");
            assertThat(channel.get("transport").get("config").get("endpoint").asText())
                    .matches("tcp://127\\.0\\.0\\.1:\\d+").isEqualTo(w.kvMetricsEndpoint());
        }
        // Every name is NON_ALPHANUMERIC percent-encoded, and no temporary file is left behind.
        try (Stream<Path> all = Files.walk(root)) {
            assertThat(all.filter(Files::isRegularFile).map(p -> p.getFileName().toString()))
                    .hasSize(12).allMatch(n -> n.matches("([A-Za-z0-9]|%[0-9A-F]{2})+"));
        }
    }

    @Test
    void aggregatedFleetUsesTheBackendComponent() throws Exception {
        start(SimFleet.Options.defaults(root, "m").withWorkers(0, 3));
        assertThat(fleet.workers()).extracting(SimWorker::component).containsOnly("backend");
        assertThat(fleet.workers()).extracting(SimWorker::role).containsOnly(DirectFrontend.Role.AGGREGATED);
        assertThat(bucket("v1/instances").keySet()).allMatch(k -> k.startsWith("dynamo/backend/generate/"));
    }

    @Test
    void heartbeatTouchesTheFilesAndStopRemovesThem() throws Exception {
        start(SimFleet.Options.defaults(root, "m").withHeartbeat(Duration.ofMillis(100)));
        List<Path> files;
        try (Stream<Path> all = Files.walk(root)) {
            files = all.filter(Files::isRegularFile).toList();
        }
        FileTime old = FileTime.fromMillis(System.currentTimeMillis() - 60_000);
        for (Path f : files) {
            Files.setLastModifiedTime(f, old);
        }
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            for (Path f : files) {
                assertThat(Files.getLastModifiedTime(f).toMillis()).isGreaterThan(System.currentTimeMillis() - 5_000);
            }
        });
        fleet.close();
        fleet = null;
        for (Path f : files) {
            assertThat(f).doesNotExist();
        }
    }

    @Test
    void publishesActiveLoadFramesThatFollowInFlightRequests() throws Exception {
        start(SimFleet.Options.defaults(root, "m").withFrontend("127.0.0.1", 0, 100, 50));
        SimWorker prefill = fleet.workers().get(0);
        SimWorker decode = fleet.workers().get(2);
        try (ZContext ctx = new ZContext(1)) {
            SubscribedSocket subscribed = subscribe(ctx, decode);
            ZMQ.Socket sub = subscribed.socket();
            Sample first = subscribed.first();
            assertThat(first.publisherId).isEqualTo(decode.publisherId());
            assertThat(first.load.get("worker_id")).isEqualTo(Long.toUnsignedString(decode.instanceId()));
            assertThat(first.load.get("active_decode_blocks")).isEqualTo("0");
            assertThat(first.load.get("dp_rank")).isEqualTo("0");
            Sample second = receive(sub);
            assertThat(second.sequence).isEqualTo(first.sequence + 1);

            // One streamed request pinned to (prefill, decode): both count it, decode until the stream ends.
            CompletableFuture<HttpResponse<String>> answer = client.sendAsync(HttpRequest.newBuilder(
                    URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                    .header("x-dynamo-worker-instance-id", Long.toUnsignedString(decode.instanceId()))
                    .header("x-dynamo-prefill-instance-id", Long.toUnsignedString(prefill.instanceId()))
                    .POST(HttpRequest.BodyPublishers.ofString("{\"stream\":true,\"messages\":[]}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            await().atMost(Duration.ofSeconds(20)).until(() -> decode.inFlight() == 1);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(Long.parseLong(receive(sub).load.get("active_decode_blocks"))).isPositive());
            HttpResponse<String> done = answer.get(30, TimeUnit.SECONDS);
            assertThat(done.statusCode()).isEqualTo(200);
            assertThat(done.body()).contains("data: [DONE]");
            assertThat(decode.inFlight()).isZero();
            assertThat(prefill.inFlight()).isZero();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(receive(sub).load.get("active_decode_blocks")).isEqualTo("0"));
        }
    }

    @Test
    void frontendRefusesAMissingPrefillPinWithUpstreamsText() throws Exception {
        start(SimFleet.Options.defaults(root, "m"));
        SimWorker decode = fleet.workers().get(2);
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", Long.toUnsignedString(decode.instanceId()))
                .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.body()).contains(DirectFrontend.PREFILL_ID_ERROR);
        assertThat(decode.inFlight()).isZero();
    }

    @Test
    void publishesOneSamplePerDpRankWithTheRankSetAndLoadsOnlyThePinnedRank() throws Exception {
        start(SimFleet.Options.defaults(root, "m").withFrontend("127.0.0.1", 0, 4, 10)
                .withPools(List.of(Pool.of("dynamo", "m", DirectFrontend.Role.AGGREGATED, 1).withDp(3))));
        SimWorker w = fleet.workers().get(0);
        JsonNode card = bucket("v1/mdc").values().iterator().next().get("card_json");
        assertThat(card.get("runtime_config").get("data_parallel_size").asInt()).isEqualTo(3);
        assertThat(card.get("runtime_config").get("data_parallel_start_rank").asInt()).isZero();

        // A request pinned to rank 1, held by a stall so its KV stays put: only rank 1 reports blocks.
        w.stall();
        CompletableFuture<HttpResponse<String>> answer = client.sendAsync(HttpRequest.newBuilder(
                URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", Long.toUnsignedString(w.instanceId()))
                .header("x-dynamo-dp-rank", "1")
                .POST(HttpRequest.BodyPublishers.ofString("{\"stream\":true,\"messages\":[]}")).build(),
                HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(20)).until(() -> w.kvUsedBlocks(1) > 0);
        assertThat(w.kvUsedBlocks(0)).isZero();
        assertThat(w.kvUsedBlocks(2)).isZero();
        try (ZContext ctx = new ZContext(1)) {
            ZMQ.Socket sub = subscribe(ctx, w).socket();
            Map<String, String> byRank = new HashMap<>();
            long previous = -1;
            while (byRank.size() < 3) {
                Sample s = receive(sub);
                assertThat(s.load.get("worker_id")).isEqualTo(Long.toUnsignedString(w.instanceId()));
                if (previous >= 0) {
                    assertThat(s.sequence).isEqualTo(previous + 1);
                }
                previous = s.sequence;
                byRank.put(s.load.get("dp_rank"), s.load.get("kv_used_blocks"));
            }
            assertThat(byRank).containsOnlyKeys("0", "1", "2").containsEntry("0", "0").containsEntry("2", "0")
                    .containsEntry("1", Long.toString(w.kvUsedBlocks(1)));
        }
        w.resume();
        assertThat(answer.get(30, TimeUnit.SECONDS).body()).contains("data: [DONE]");
        await().atMost(Duration.ofSeconds(20)).until(() -> w.kvUsedBlocks() == 0);
    }

    @Test
    void poolsOfSeveralNamespacesAndModelsWithAnAggregatedPoolBesideADisaggregatedOne() throws Exception {
        start(SimFleet.Options.defaults(root, "unused").withFrontend("127.0.0.1", 0, 2, 0).withPools(List.of(
                Pool.of("alpha", "Qwen/Qwen3-0.6B", DirectFrontend.Role.PREFILL, 1),
                Pool.of("alpha", "Qwen/Qwen3-0.6B", DirectFrontend.Role.DECODE, 2),
                Pool.of("alpha", "meta/llama", DirectFrontend.Role.AGGREGATED, 1).withComponent("llama"),
                Pool.of("beta", "mistral", DirectFrontend.Role.AGGREGATED, 2).withDp(2))));
        assertThat(fleet.workers()).hasSize(6);
        assertThat(fleet.workers()).extracting(SimWorker::name).doesNotHaveDuplicates()
                .allMatch(n -> n.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"));
        Map<String, JsonNode> cards = bucket("v1/mdc");
        assertThat(cards).hasSize(6);
        for (SimWorker w : fleet.workers()) {
            JsonNode model = cards.get(w.namespace() + "/" + w.component() + "/generate/"
                    + Long.toHexString(w.instanceId()));
            assertThat(model).as(w.name()).isNotNull();
            assertThat(model.get("namespace").asText()).isEqualTo(w.namespace());
            assertThat(model.get("card_json").get("display_name").asText()).isEqualTo(w.model());
            assertThat(model.get("card_json").get("runtime_config").get("data_parallel_size").asInt())
                    .isEqualTo(w.dpSize());
        }
        assertThat(bucket("v1/event_channels").keySet()).hasSize(6)
                .anyMatch(k -> k.startsWith("namespace/alpha/component/llama/endpoint/generate/topic/kv_metrics/"))
                .anyMatch(k -> k.startsWith("namespace/beta/component/backend/"));

        // The aggregated pools need no prefill pin, though a prefill pool serves another model beside them.
        SimWorker llama = fleet.workers().stream().filter(w -> w.component().equals("llama")).findFirst().orElseThrow();
        SimWorker decode = fleet.workers().stream().filter(w -> w.role() == DirectFrontend.Role.DECODE).findFirst()
                .orElseThrow();
        assertThat(pinned(llama.instanceId()).statusCode()).isEqualTo(200);
        assertThat(pinned(decode.instanceId()).body()).contains(DirectFrontend.PREFILL_ID_ERROR);
    }

    private HttpResponse<String> pinned(long instanceId) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(fleet.frontendUrl() + "/v1/chat/completions"))
                .header("x-dynamo-worker-instance-id", Long.toUnsignedString(instanceId))
                .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[]}")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private record Sample(long publisherId, long sequence, Map<String, String> load) {
    }

    private record SubscribedSocket(ZMQ.Socket socket, Sample first) {
    }

    /**
     * A SUB socket on {@code worker}'s publisher and the first sample it got. Until the SUB's subscription has
     * reached the PUB every sample is dropped by design; on a loaded 2-core machine a JeroMQ connection has
     * been seen to stay silent for 30 s, so each attempt waits 10 s and a silent socket is replaced by a fresh
     * one (as a real subscriber would reconnect). A failure says whether the publisher was sending at all.
     */
    private static SubscribedSocket subscribe(ZContext ctx, SimWorker worker) throws Exception {
        for (int attempt = 1; attempt <= 3; attempt++) {
            ZMQ.Socket sub = ctx.createSocket(SocketType.SUB);
            sub.setReceiveTimeOut(10_000);
            sub.connect(worker.kvMetricsEndpoint());
            sub.subscribe("kv_metrics".getBytes(StandardCharsets.UTF_8));
            byte[] topic = sub.recv();
            if (topic != null) {
                return new SubscribedSocket(sub, decodeRest(sub, topic));
            }
            ctx.destroySocket(sub);
        }
        throw new AssertionError("no kv_metrics sample in 3 x 10 s; the publisher had sent "
                + worker.publishedSamples() + " samples, interrupted=" + Thread.currentThread().isInterrupted());
    }

    /** Decodes one message by the spec: 4 parts, bare topic, u64 BE ids, version 1 + u32 BE length + envelope. */
    private static Sample receive(ZMQ.Socket sub) throws Exception {
        byte[] topic = sub.recv();
        assertThat(topic).as("a sample within 10 s").isNotNull();
        return decodeRest(sub, topic);
    }

    private static Sample decodeRest(ZMQ.Socket sub, byte[] topic) throws Exception {
        assertThat(new String(topic, StandardCharsets.UTF_8)).isEqualTo("kv_metrics");
        assertThat(sub.hasReceiveMore()).isTrue();
        byte[] pub = sub.recv();
        byte[] seq = sub.recv();
        byte[] frame = sub.recv();
        assertThat(sub.hasReceiveMore()).isFalse();
        assertThat(pub).hasSize(8);
        assertThat(seq).hasSize(8);
        ByteBuffer f = ByteBuffer.wrap(frame);
        assertThat(f.get()).isEqualTo((byte) 1);
        int len = f.getInt();
        assertThat(len).isEqualTo(frame.length - 5);
        MessageUnpacker envelope = MessagePack.newDefaultUnpacker(frame, 5, len);
        assertThat(envelope.unpackMapHeader()).isEqualTo(5);
        Map<String, Value> env = new HashMap<>();
        List<String> order = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
            String k = envelope.unpackString();
            order.add(k);
            env.put(k, envelope.unpackValue());
        }
        assertThat(order).containsExactly("publisher_id", "sequence", "published_at", "topic", "payload");
        long publisherId = ByteBuffer.wrap(pub).getLong();
        long sequence = ByteBuffer.wrap(seq).getLong();
        assertThat(env.get("publisher_id").asIntegerValue().asBigInteger().toString())
                .isEqualTo(Long.toUnsignedString(publisherId));
        assertThat(env.get("sequence").asIntegerValue().asLong()).isEqualTo(sequence);
        assertThat(env.get("topic").asStringValue().asString()).isEqualTo("kv_metrics");
        assertThat(env.get("published_at").asIntegerValue().asLong())
                .isBetween(System.currentTimeMillis() - 10_000, System.currentTimeMillis() + 1_000);
        assertThat(env.get("payload").isBinaryValue()).isTrue();
        MessageUnpacker payload = MessagePack.newDefaultUnpacker(env.get("payload").asBinaryValue().asByteArray());
        int n = payload.unpackMapHeader();
        Map<String, String> load = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String k = payload.unpackString();
            Value v = payload.unpackValue();
            load.put(k, v.isNilValue() ? "nil" : v.isIntegerValue() ? v.asIntegerValue().asBigInteger().toString()
                    : v.toString());
        }
        assertThat(load.keySet()).containsExactly("worker_id", "dp_rank", "active_decode_blocks",
                "active_prefill_tokens", "scheduler_load_scope", "kv_used_blocks");
        assertThat(load.get("dp_rank")).matches("\\d+");
        assertThat(load.get("active_prefill_tokens")).isEqualTo("nil");
        return new Sample(publisherId, sequence, load);
    }

    /** A bucket read as a reader would: skip {@code .tmp_*}, percent-decode each name once, parse the JSON. */
    private Map<String, JsonNode> bucket(String bucket) throws Exception {
        Map<String, JsonNode> out = new HashMap<>();
        try (Stream<Path> files = Files.list(root.resolve(bucket))) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.startsWith(".tmp_")) {
                    continue;
                }
                out.put(URLDecoder.decode(name.replace("+", "%2B"), StandardCharsets.UTF_8),
                        JSON.readTree(Files.readString(f)));
            }
        }
        return out;
    }
}
