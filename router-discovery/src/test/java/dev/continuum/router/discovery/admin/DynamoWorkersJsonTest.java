package dev.continuum.router.discovery.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DynamoWorkersJsonTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * The example worker of docs/decisions.md: decode, dp ranks 2..5, raw card and a tcp publisher that must not
     * leak.
     */
    private static DynamoSnapshot seedExample() {
        ModelCard card = new ModelCard("Qwen/Qwen3-32B", "Decode", false, 64,
                new ModelCard.WorkerCapacity(12000L, 8192L, 256L, 32768L), 2, 4,
                new ModelCard.DisaggregatedEndpoint("dynamo/prefill/generate", null, null), ModelCard.CardArtifacts.NONE,
                "1.5.0", "{\"display_name\":\"Qwen/Qwen3-32B\",\"secret_field\":\"raw\"}");
        DynamoWorker worker = new DynamoWorker(new WorkerId("dynamo", 1736491), WorkerRole.DECODE, "decode", "generate",
                card, Instant.parse("2026-09-23T04:11:02.734Z"), Instant.parse("2026-09-23T04:19:48.001Z"));
        DynamoPublisher publisher = new DynamoPublisher(new PublisherId("dynamo", 2046539), PublisherTopic.KV_METRICS,
                "decode", "generate", "tcp://10.0.0.7:41000");
        return new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("dynamo"), 12, true,
                FleetView.of(List.of(worker), List.of(publisher)));
    }

    @Test
    void rendersTheSeedsExampleExactly() throws Exception {
        JsonNode expected = MAPPER.readTree("""
                {
                  "enabled": true,
                  "connected": true,
                  "source": "etcd",
                  "signals": {"load": true, "capacity": true},
                  "namespace": "dynamo",
                  "namespaces": ["dynamo"],
                  "generation": 12,
                  "workers": [
                    {
                      "instance_id": "1a7f2b",
                      "namespace": "dynamo",
                      "worker_id": "1736491",
                      "role": "decode",
                      "model": "Qwen/Qwen3-32B",
                      "component": "decode",
                      "endpoint": "generate",
                      "dp_start_rank": 2,
                      "dp_size": 4,
                      "block_size": 64,
                      "capacity": {
                        "total_kv_blocks": 12000,
                        "max_num_batched_tokens": 8192,
                        "max_num_seqs": 256,
                        "context_length": 32768
                      },
                      "disaggregated_endpoint": "dynamo/prefill/generate",
                      "first_seen": "2026-09-23T04:11:02+00:00",
                      "last_updated": "2026-09-23T04:19:48+00:00"
                    }
                  ]
                }""");
        // Compared as parsed JSON: the tree holds Long nodes where a parser makes Int nodes of small numbers.
        assertThat(MAPPER.readTree(DynamoWorkersJson.render(seedExample()).toString())).isEqualTo(expected);
        assertThat(MAPPER.readTree(DynamoWorkersJson.renderBytes(seedExample()))).isEqualTo(expected);
    }

    @Test
    void fieldsComeInTheSeedsOrder() {
        assertThat(DynamoWorkersJson.render(seedExample()).fieldNames()).toIterable().containsExactly("enabled",
                "connected", "source", "signals", "namespace", "namespaces", "generation", "workers");
        assertThat(DynamoWorkersJson.render(seedExample()).get("workers").get(0).fieldNames()).toIterable()
                .containsExactly("instance_id", "namespace", "worker_id", "role", "model", "component", "endpoint",
                        "dp_start_rank", "dp_size", "block_size", "capacity", "disaggregated_endpoint", "first_seen",
                        "last_updated");
    }

    @Test
    void noAddressNoRawCardAndNoReleaseLeaves() {
        String body = new String(DynamoWorkersJson.renderBytes(seedExample()), StandardCharsets.UTF_8);
        assertThat(body).doesNotContain("10.0.0.7").doesNotContain("tcp://").doesNotContain("secret_field")
                .doesNotContain("1.5.0");
    }

    @Test
    void unknownValuesAreNullNotOmitted() {
        DynamoWorker bare = new DynamoWorker(new WorkerId("dynamo", -1), WorkerRole.AGGREGATED, "backend", "generate",
                null, Instant.EPOCH, Instant.EPOCH);
        JsonNode worker = DynamoWorkersJson.render(new DynamoSnapshot(true, DiscoverySourceKind.FILE, List.of("dynamo"),
                3, false, FleetView.of(List.of(bare), List.of()))).get("workers").get(0);
        assertThat(worker.get("instance_id").textValue()).isEqualTo("ffffffffffffffff");
        assertThat(worker.get("worker_id").textValue()).isEqualTo("18446744073709551615");
        for (String field : List.of("model", "dp_start_rank", "dp_size", "block_size", "disaggregated_endpoint")) {
            assertThat(worker.has(field)).as(field).isTrue();
            assertThat(worker.get(field).isNull()).as(field).isTrue();
        }
        assertThat(worker.get("capacity").get("total_kv_blocks").isNull()).isTrue();
        assertThat(worker.get("first_seen").textValue()).isEqualTo("1970-01-01T00:00:00+00:00");
    }

    @Test
    void aBootstrapAddressIsNotExported() {
        DynamoSnapshot example = seedExample();
        DynamoWorker worker = example.workers().get(0);
        ModelCard card = worker.card();
        ModelCard withBootstrap = new ModelCard(card.model(), card.workerType(), false, card.kvCacheBlockSize(),
                card.capacity(), card.dataParallelStartRank(), card.dataParallelSize(),
                new ModelCard.DisaggregatedEndpoint(null, "10.1.2.3", 8998), card.artifacts(), null, null);
        DynamoWorker changed = new DynamoWorker(worker.id(), worker.role(), worker.component(), worker.endpoint(),
                withBootstrap, worker.firstSeen(), worker.lastUpdated());
        String body = new String(DynamoWorkersJson.renderBytes(new DynamoSnapshot(true, DiscoverySourceKind.ETCD,
                List.of("dynamo"), 1, true, FleetView.of(List.of(changed), List.of()))), StandardCharsets.UTF_8);
        assertThat(body).doesNotContain("10.1.2.3").contains("\"disaggregated_endpoint\":null");
    }

    @Test
    void aDisabledRegistryRendersEnabledFalseWithTheSameShape() {
        JsonNode body = DynamoWorkersJson.render(DynamoSnapshot.disabled(7));
        assertThat(body.get("enabled").booleanValue()).isFalse();
        assertThat(body.get("connected").booleanValue()).isFalse();
        assertThat(body.get("workers")).isEmpty();
        assertThat(body.get("generation").longValue()).isEqualTo(7);
        assertThat(body.get("namespaces")).hasSize(1);
    }

    @Test
    void multipleNamespacesListTheFirstAsNamespace() {
        DynamoSnapshot snapshot = new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("prod", "canary"), 1, true,
                FleetView.empty());
        JsonNode body = DynamoWorkersJson.render(snapshot);
        assertThat(body.get("namespace").textValue()).isEqualTo("prod");
        assertThat(body.get("namespaces").toString()).isEqualTo("[\"prod\",\"canary\"]");
    }
}
