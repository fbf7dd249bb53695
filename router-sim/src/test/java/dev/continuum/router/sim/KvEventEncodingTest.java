package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * The kv-events messages as Debian's python3-msgpack decodes them: four frames, the envelope, and each
 * {@code RouterEvent} form (stored, removed, cleared) with upstream's field names, order and types, u64 values
 * past 2^63 included.
 */
class KvEventEncodingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long BIG = 0xFEDC_BA98_7654_3210L; // 18364758544493064720 unsigned

    private static JsonNode decoded(long sequence, byte[] payload) throws Exception {
        return PythonKvEvents.decode(EventPublisher.message("kv-events", BIG, sequence, 1_790_000_000_000L, payload));
    }

    private static JsonNode expected(long sequence, String payloadJson) throws Exception {
        return JSON.readTree("""
                {"topic": "kv-events", "publisher_id": 18364758544493064720, "sequence": %d,
                 "envelope": {"publisher_id": 18364758544493064720, "sequence": %d, "published_at": 1790000000000,
                              "topic": "kv-events", "payload": %s}}""".formatted(sequence, sequence, payloadJson));
    }

    @Test
    void storedCarriesTheParentThePositionAndEachBlocksTwoHashes() throws Exception {
        long[] seq = {11, BIG, 33};
        long[] local = {-1L, 22, 44};

        JsonNode got = decoded(7, KvEventEncoding.stored(BIG, 5, 2, 11L, seq, local, 1, 3));

        assertThat(got).isEqualTo(expected(7, """
                {"worker_id": 18364758544493064720, "storage_tier": "device",
                 "event": {"event_id": 5,
                           "data": {"stored": {"parent_hash": 11, "start_position": 1, "blocks": [
                               {"block_hash": 18364758544493064720, "tokens_hash": 22, "mm_extra_info": null},
                               {"block_hash": 33, "tokens_hash": 44, "mm_extra_info": null}]}},
                           "dp_rank": 2}}"""));
        // Key order is upstream's declaration order (serde writes named maps in field order).
        assertThat(got.at("/envelope/payload").fieldNames()).toIterable()
                .containsExactly("worker_id", "storage_tier", "event");
        assertThat(got.at("/envelope/payload/event").fieldNames()).toIterable()
                .containsExactly("event_id", "data", "dp_rank");
        assertThat(got.at("/envelope/payload/event/data/stored").fieldNames()).toIterable()
                .containsExactly("parent_hash", "start_position", "blocks");
    }

    @Test
    void aChainFromTheRootHasNoParent() throws Exception {
        JsonNode got = decoded(0, KvEventEncoding.stored(1, 0, 0, null, new long[] {-1L}, new long[] {3}, 0, 1));

        assertThat(got.at("/envelope/payload/event/data/stored/parent_hash").isNull()).isTrue();
        assertThat(got.at("/envelope/payload/event/data/stored/blocks/0/block_hash").asText())
                .isEqualTo("18446744073709551615");
    }

    @Test
    void removedListsTheSequenceHashes() throws Exception {
        JsonNode got = decoded(1, KvEventEncoding.removed(9, 6, 0, new long[] {1, 2, BIG, 4}, 1, 3));

        assertThat(got).isEqualTo(expected(1, """
                {"worker_id": 9, "storage_tier": "device",
                 "event": {"event_id": 6, "data": {"removed": {"block_hashes": [2, 18364758544493064720]}},
                           "dp_rank": 0}}"""));
    }

    @Test
    void clearedIsTheBareVariantName() throws Exception {
        JsonNode got = decoded(2, KvEventEncoding.cleared(9, 7, 1));

        assertThat(got).isEqualTo(expected(2, """
                {"worker_id": 9, "storage_tier": "device",
                 "event": {"event_id": 7, "data": "cleared", "dp_rank": 1}}"""));
    }
}
