package dev.continuum.router.discovery.etcd;

import static dev.continuum.router.testing.DynamoRecords.card;
import static dev.continuum.router.testing.DynamoRecords.cardKey;
import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static dev.continuum.router.testing.DynamoRecords.model;

import dev.continuum.router.testing.EtcdExtension;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** Registers workers in a real etcd the way Dynamo does: every key of a worker under its own lease. */
final class EtcdFleet {
    private EtcdFleet() {
    }

    /** Grants a lease of {@code ttlSeconds} and writes a decode worker's endpoint and card under it. */
    static long registerWorker(EtcdExtension etcd, String namespace, long ttlSeconds) throws Exception {
        var client = etcd.writer();
        long lease = client.getLeaseClient().grant(ttlSeconds).get(10, TimeUnit.SECONDS).getID();
        // Dynamo's instance ID is its primary lease ID.
        put(etcd, endpointKey(namespace, "decode", "generate", lease), endpoint(namespace, "decode", "generate", lease),
                lease);
        put(etcd, cardKey(namespace, "decode", "generate", lease),
                model(namespace, "decode", "generate", lease, card("Qwen/Qwen3-32B", "Decode")), lease);
        return lease;
    }

    static void put(EtcdExtension etcd, String key, String value, long lease) throws Exception {
        etcd.writer().getKVClient().put(bytes(key), bytes(value), PutOption.builder().withLeaseId(lease).build())
                .get(10, TimeUnit.SECONDS);
    }

    static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
