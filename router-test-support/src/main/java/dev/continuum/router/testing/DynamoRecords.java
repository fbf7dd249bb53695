package dev.continuum.router.testing;

import java.nio.charset.StandardCharsets;

/**
 * Dynamo discovery records as workers write them (upstream's v1.4/v1.5 shapes, docs/decisions.md),
 * with their etcd keys. For tests of every module that needs a fleet: the reducer, and the load and KV
 * subscriptions fed by a real etcd. IDs are unsigned 64-bit values held in {@code long}.
 */
public final class DynamoRecords {
    private DynamoRecords() {
    }

    public static String hex(long id) {
        return Long.toHexString(id);
    }

    public static String decimal(long id) {
        return Long.toUnsignedString(id);
    }

    /** {@code v1/instances/<ns>/<component>/<endpoint>/<id:x>}. */
    public static String endpointKey(String namespace, String component, String endpoint, long instanceId) {
        return "v1/instances/" + namespace + "/" + component + "/" + endpoint + "/" + hex(instanceId);
    }

    /** An Endpoint record like the example worker's, with the instance ID as a JSON number. */
    public static String endpoint(String namespace, String component, String endpoint, long instanceId) {
        return """
                {"type":"Endpoint","namespace":"%s","component":"%s","endpoint":"%s","instance_id":%s,\
                "transport":{"tcp":"10.0.0.4:31000/%s/%s/%s/%s"},"device_type":"cuda","request_plane_codec":"msgpack"}"""
                .formatted(namespace, component, endpoint, decimal(instanceId), hex(instanceId), namespace, component,
                        endpoint);
    }

    /** {@code v1/mdc/<ns>/<component>/<endpoint>/<id:x>}. */
    public static String cardKey(String namespace, String component, String endpoint, long instanceId) {
        return "v1/mdc/" + namespace + "/" + component + "/" + endpoint + "/" + hex(instanceId);
    }

    /** A Model record carrying {@code cardJson} nested as JSON. */
    public static String model(String namespace, String component, String endpoint, long instanceId, String cardJson) {
        return """
                {"type":"Model","namespace":"%s","component":"%s","endpoint":"%s","instance_id":%s,"card_json":%s}"""
                .formatted(namespace, component, endpoint, decimal(instanceId), cardJson);
    }

    /** The example card (docs/decisions.md) for a worker of {@code workerType} ({@code Prefill}, {@code Decode}). */
    public static String card(String displayName, String workerType) {
        return """
                {"display_name":"%s","slug":"qwen-qwen3-32b","worker_type":"%s","kv_cache_block_size":64,\
                "context_length":32768,"migration_limit":0,"model_type":"Chat | Completions","model_input":"Tokens",\
                "tokenizer":{"hf_tokenizer_json":{"path":"/models/qwen/tokenizer.json",\
                "checksum":"blake3:af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"}},\
                "chat_template_file":{"hf_chat_template":{"is_custom":false,"file":{"path":"/models/qwen/chat.jinja",\
                "checksum":"blake3:0b8b60248fad7ac6dfac221b7e01a8b91c772421a15b387dd1fb2d6a94aee438"}}},\
                "runtime_config":{"total_kv_blocks":12000,"max_num_batched_tokens":8192,"max_num_seqs":256,\
                "context_length":32768,"data_parallel_start_rank":0,"data_parallel_size":1,\
                "disaggregated_endpoint":"dynamo/decode/generate","enable_local_indexer":true}}"""
                .formatted(displayName, workerType);
    }

    /**
     * {@code v1/event_channels/namespace/<ns>/component/<c>/endpoint/<e>/topic/<t>/<id:x>}, each segment
     * percent-encoded the way Dynamo does it.
     */
    public static String channelKey(String namespace, String component, String endpoint, String topic,
                                    long publisherId) {
        return "v1/event_channels/namespace/" + encode(namespace) + "/component/" + encode(component) + "/endpoint/"
                + encode(endpoint) + "/topic/" + encode(topic) + "/" + hex(publisherId);
    }

    /** An endpoint-scoped direct ZMQ EventChannel record (upstream's shape). */
    public static String channel(String namespace, String component, String endpoint, String topic, long publisherId,
                                 String tcpEndpoint) {
        return """
                {"type":"EventChannel","scope":{"kind":"endpoint","endpoint":{"namespace":"%s","component":"%s",\
                "name":"%s"}},"topic":"%s","instance_id":%s,"transport":{"kind":"Zmq","config":{"endpoint":"%s"}}}"""
                .formatted(namespace, component, endpoint, topic, decimal(publisherId), tcpEndpoint);
    }

    /** Dynamo's event-channel key segment encoding: ASCII alphanumerics, '-' and '_' pass, others %XX. */
    public static String encode(String segment) {
        StringBuilder out = new StringBuilder();
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((Character.isLetterOrDigit(c) && c < 0x80) || c == '-' || c == '_') {
                out.append((char) c);
            } else {
                out.append(String.format("%%%02X", c));
            }
        }
        return out.toString();
    }

    /** The file store's name for a bucket-relative key: every byte outside [A-Za-z0-9] becomes %XX. */
    public static String fileStoreName(String bucketRelativeKey) {
        StringBuilder out = new StringBuilder();
        for (byte b : bucketRelativeKey.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c < 0x80 && Character.isLetterOrDigit(c)) {
                out.append((char) c);
            } else {
                out.append(String.format("%%%02X", c));
            }
        }
        return out.toString();
    }
}
