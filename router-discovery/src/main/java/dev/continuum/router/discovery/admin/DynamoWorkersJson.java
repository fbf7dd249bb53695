package dev.continuum.router.discovery.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code GET /admin/dynamo/workers}: a pure function of one snapshot. IDs are strings
 * ({@code instance_id} lowercase hex without padding, {@code worker_id} unsigned decimal), timestamps are RFC
 * 3339 in UTC to the second with {@code +00:00}, unknown values are {@code null} rather than omitted, and
 * workers come in snapshot order (namespace, then instance ID). Nothing internal leaves: no transport or
 * publisher address, no raw card. A disabled registry renders {@code "enabled": false} with the same shape.
 *
 * <p>{@link #render} returns a tree so the admin route can append what other modules own
 * ({@code load_publishers}, {@code kv_event_publishers}, {@code subscriptions}, {@code broker_coverage}).
 */
public final class DynamoWorkersJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final DateTimeFormatter RFC_3339_SECONDS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ssxxx").withZone(ZoneOffset.UTC);

    private DynamoWorkersJson() {
    }

    public static ObjectNode render(DynamoSnapshot snapshot) {
        ObjectNode body = NODES.objectNode();
        body.put("enabled", snapshot.enabled());
        body.put("connected", snapshot.enabled() && snapshot.connected());
        body.put("source", snapshot.source().configName());
        ObjectNode signals = body.putObject("signals");
        signals.put("load", snapshot.signals().load());
        signals.put("capacity", snapshot.signals().capacity());
        body.put("namespace", snapshot.namespace());
        ArrayNode namespaces = body.putArray("namespaces");
        snapshot.namespaces().forEach(namespaces::add);
        body.put("generation", snapshot.generation());
        ArrayNode workers = body.putArray("workers");
        for (DynamoWorker worker : snapshot.workers()) {
            workers.add(worker(worker));
        }
        return body;
    }

    public static byte[] renderBytes(DynamoSnapshot snapshot) {
        try {
            return MAPPER.writeValueAsBytes(render(snapshot));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ObjectNode worker(DynamoWorker worker) {
        ModelCard card = worker.card();
        ModelCard.WorkerCapacity capacity = worker.capacity();
        ObjectNode node = NODES.objectNode();
        node.put("instance_id", worker.id().hex());
        node.put("namespace", worker.namespace());
        node.put("worker_id", worker.id().decimal());
        node.put("role", worker.role().wireName());
        node.put("model", worker.model());
        node.put("component", worker.component());
        node.put("endpoint", worker.endpoint());
        node.put("dp_start_rank", card == null ? null : card.dataParallelStartRank());
        node.put("dp_size", card == null ? null : card.dataParallelSize());
        node.put("block_size", card == null ? null : card.kvCacheBlockSize());
        ObjectNode capacities = node.putObject("capacity");
        capacities.put("total_kv_blocks", capacity.totalKvBlocks());
        capacities.put("max_num_batched_tokens", capacity.maxNumBatchedTokens());
        capacities.put("max_num_seqs", capacity.maxNumSeqs());
        capacities.put("context_length", capacity.contextLength());
        node.set("disaggregated_endpoint", disaggregatedEndpoint(card == null ? null : card.disaggregatedEndpoint()));
        node.put("first_seen", timestamp(worker.firstSeen()));
        node.put("last_updated", timestamp(worker.lastUpdated()));
        return node;
    }

    /**
     * The path string older cards write ({@code dynamo/prefill/generate}). Newer cards write a bootstrap host
     * and port instead: that is a worker address, which the admin API never exports, so it renders as null.
     */
    private static com.fasterxml.jackson.databind.JsonNode disaggregatedEndpoint(
            ModelCard.@Nullable DisaggregatedEndpoint endpoint) {
        return endpoint == null || endpoint.path() == null ? NODES.nullNode() : NODES.textNode(endpoint.path());
    }

    static String timestamp(Instant instant) {
        return RFC_3339_SECONDS.format(instant.truncatedTo(ChronoUnit.SECONDS));
    }
}
