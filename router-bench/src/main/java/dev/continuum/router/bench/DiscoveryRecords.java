package dev.continuum.router.bench;

import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * Dynamo discovery records as workers write them to etcd (dynamo-wire.md 1.1, 1.3, 1.4; the seed's example
 * card), the same shapes router-test-support's DynamoRecords builds for the tests.
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
            String path = ns + "/" + component + "/generate/" + Long.toHexString(id);
            records.add(DiscoveryEvent.Put.of("v1/instances/" + path, endpoint(ns, component, id)));
            records.add(DiscoveryEvent.Put.of("v1/mdc/" + path, model(ns, component, id,
                    card(i % 2 == 0 ? "Decode" : "Prefill"))));
            long publisher = id + 1;
            records.add(DiscoveryEvent.Put.of("v1/event_channels/namespace/" + ns + "/component/" + component
                            + "/endpoint/generate/topic/kv_metrics/" + Long.toHexString(publisher),
                    channel(ns, component, publisher, "tcp://10.0." + (i >> 8) + "." + (i & 255) + ":41000")));
        }
        return records;
    }

    private static String endpoint(String ns, String component, long id) {
        return """
                {"type":"Endpoint","namespace":"%s","component":"%s","endpoint":"generate","instance_id":%s,\
                "transport":{"tcp":"10.0.0.4:31000/%s/%s/%s/generate"},"device_type":"cuda",\
                "request_plane_codec":"msgpack"}"""
                .formatted(ns, component, Long.toUnsignedString(id), Long.toHexString(id), ns, component);
    }

    private static String model(String ns, String component, long id, String cardJson) {
        return """
                {"type":"Model","namespace":"%s","component":"%s","endpoint":"generate","instance_id":%s,\
                "card_json":%s}"""
                .formatted(ns, component, Long.toUnsignedString(id), cardJson);
    }

    private static String card(String workerType) {
        return """
                {"display_name":"Qwen/Qwen3-32B","slug":"qwen-qwen3-32b","worker_type":"%s","kv_cache_block_size":64,\
                "context_length":32768,"migration_limit":0,"model_type":"Chat | Completions","model_input":"Tokens",\
                "tokenizer":{"hf_tokenizer_json":{"path":"/models/qwen/tokenizer.json",\
                "checksum":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}},\
                "chat_template_file":{"hf_chat_template":{"is_custom":false,"file":{"path":"/models/qwen/chat.jinja",\
                "checksum":"blake3:0b8b60248fad7ac6dfac221b7e01a8b91c772421a15b387dd1fb2d6a94aee438"}}},\
                "runtime_config":{"total_kv_blocks":12000,"max_num_batched_tokens":8192,"max_num_seqs":256,\
                "context_length":32768,"data_parallel_start_rank":0,"data_parallel_size":1,\
                "disaggregated_endpoint":"dynamo/decode/generate","enable_local_indexer":true}}"""
                .formatted(workerType);
    }

    private static String channel(String ns, String component, long publisher, String tcp) {
        return """
                {"type":"EventChannel","scope":{"kind":"endpoint","endpoint":{"namespace":"%s","component":"%s",\
                "name":"generate"}},"topic":"kv_metrics","instance_id":%s,"transport":{"kind":"Zmq",\
                "config":{"endpoint":"%s"}}}"""
                .formatted(ns, component, Long.toUnsignedString(publisher), tcp);
    }
}
