package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.testing.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The fleet in a real etcd, read back with the test's own jetcd client: keys, values, leases, and their end. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdRegistrarTest {
    @RegisterExtension
    static final EtcdExtension ETCD = EtcdExtension.plain();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path root;

    private SimFleet fleet;

    @AfterEach
    void stop() {
        if (fleet != null) {
            fleet.close();
        }
    }

    private SimFleet start() throws Exception {
        fleet = SimFleet.start(SimFleet.Options.defaults(root, "unused")
                .withStore(new Store.Etcd(List.of(ETCD.endpoint())))
                .withPools(List.of(Pool.of("dynamo", "Qwen/Qwen3-0.6B", DirectFrontend.Role.PREFILL, 1),
                        Pool.of("dynamo", "Qwen/Qwen3-0.6B", DirectFrontend.Role.DECODE, 1),
                        Pool.of("tenant-b", "mistral", DirectFrontend.Role.AGGREGATED, 1).withDp(2))));
        return fleet;
    }

    private static Map<String, KeyValue> all() throws Exception {
        List<KeyValue> kvs = ETCD.writer().getKVClient().get(bytes("v1/"),
                GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs();
        Map<String, KeyValue> out = new HashMap<>();
        kvs.forEach(kv -> out.put(kv.getKey().toString(StandardCharsets.UTF_8), kv));
        return out;
    }

    private static long ttl(long lease) throws Exception {
        return ETCD.writer().getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS)
                .getTTL();
    }

    @Test
    void everyKeyOfAWorkerLivesUnderItsOwnTenSecondLeaseWhoseIdIsTheInstanceId() throws Exception {
        start();
        Map<String, KeyValue> keys = all();
        assertThat(keys).hasSize(9);
        assertThat(fleet.workers()).extracting(SimWorker::instanceId).doesNotHaveDuplicates();
        for (SimWorker w : fleet.workers()) {
            String hex = Long.toHexString(w.instanceId());
            String base = w.namespace() + "/" + w.component() + "/generate/" + hex;
            KeyValue endpoint = keys.get("v1/instances/" + base);
            KeyValue card = keys.get("v1/mdc/" + base);
            KeyValue channel = keys.get("v1/event_channels/namespace/" + w.namespace() + "/component/"
                    + w.component() + "/endpoint/generate/topic/kv_metrics/" + Long.toHexString(w.publisherId()));
            assertThat(List.of(endpoint, card, channel)).as(w.name()).doesNotContainNull()
                    .allSatisfy(kv -> assertThat(kv.getLease()).isEqualTo(w.instanceId()));
            var granted = ETCD.writer().getLeaseClient().timeToLive(w.instanceId(), LeaseOption.DEFAULT)
                    .get(10, TimeUnit.SECONDS);
            assertThat(granted.getGrantedTTL()).isEqualTo(10);

            JsonNode e = JSON.readTree(endpoint.getValue().getBytes());
            assertThat(e.get("type").asText()).isEqualTo("Endpoint");
            assertThat(e.get("namespace").asText()).isEqualTo(w.namespace());
            assertThat(e.get("instance_id").bigIntegerValue().longValue()).isEqualTo(w.instanceId());
            assertThat(e.get("transport").get("tcp").asText()).endsWith("/" + hex + "/generate");
            JsonNode m = JSON.readTree(card.getValue().getBytes());
            assertThat(m.get("type").asText()).isEqualTo("Model");
            assertThat(m.get("instance_id").asLong()).isEqualTo(w.instanceId());
            assertThat(m.get("card_json").get("display_name").asText()).isEqualTo(w.model());
            assertThat(m.get("card_json").get("model_type").asText())
                    .isEqualTo(w.role() == DirectFrontend.Role.PREFILL ? "Prefill" : "Chat | Completions");
            assertThat(m.get("card_json").get("runtime_config").get("data_parallel_size").asInt())
                    .isEqualTo(w.dpSize());
            JsonNode c = JSON.readTree(channel.getValue().getBytes());
            assertThat(c.get("type").asText()).isEqualTo("EventChannel");
            assertThat(c.get("scope").get("endpoint").get("namespace").asText()).isEqualTo(w.namespace());
            assertThat(c.get("transport").get("config").get("endpoint").asText()).isEqualTo(w.kvMetricsEndpoint());
        }
    }

    @Test
    void theLeasesAreKeptAliveAndRevokedOnClose() throws Exception {
        start();
        long lease = fleet.worker(0).instanceId();
        // The remaining TTL counts down between renewals; seeing it rise again is a renewal.
        AtomicLong last = new AtomicLong(ttl(lease));
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).until(() -> {
            long now = ttl(lease);
            return now > last.getAndSet(now);
        });
        assertThat(all()).hasSize(9);

        List<Long> leases = fleet.workers().stream().map(SimWorker::instanceId).toList();
        fleet.close();
        fleet = null;
        assertThat(all()).isEmpty();
        for (long id : leases) {
            assertThat(ttl(id)).as("revoked").isEqualTo(-1);
        }
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
