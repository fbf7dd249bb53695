package dev.continuum.router.bench;

import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.testing.DynamoRecords;
import java.util.ArrayList;
import java.util.List;

/**
 * Dynamo discovery records as workers write them to etcd (upstream's record shapes, docs/decisions.md; the
 * example card), built with router-test-support's {@link DynamoRecords}, the same shapes the tests use.
 */
final class DiscoveryRecords {
    private DiscoveryRecords() {
    }

    /** {@code workers} workers (alternately decode and prefill): Endpoint, Model (card) and kv_metrics channel. */
    static List<DiscoveryEvent.Put> fleet(String ns, int workers) {
        List<DiscoveryEvent.Put> records = new ArrayList<>(3 * workers);
        for (long i = 1; i <= workers; i++) {
            long id = 0x7a00000000000000L + i * 7919;
            String component = i % 2 == 0 ? "decode" : "prefill";
            records.add(DiscoveryEvent.Put.of(DynamoRecords.endpointKey(ns, component, "generate", id),
                    DynamoRecords.endpoint(ns, component, "generate", id)));
            records.add(DiscoveryEvent.Put.of(DynamoRecords.cardKey(ns, component, "generate", id),
                    DynamoRecords.model(ns, component, "generate", id,
                            DynamoRecords.card("Qwen/Qwen3-32B", i % 2 == 0 ? "Decode" : "Prefill"))));
            long publisher = id + 1;
            records.add(DiscoveryEvent.Put.of(
                    DynamoRecords.channelKey(ns, component, "generate", "kv_metrics", publisher),
                    DynamoRecords.channel(ns, component, "generate", "kv_metrics", publisher,
                            "tcp://10.0." + (i >> 8) + "." + (i & 255) + ":41000")));
        }
        return records;
    }
}
