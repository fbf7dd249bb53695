package dev.continuum.router.sim;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The JSON of the {@code DiscoveryInstance} records a Dynamo worker registers (upstream discovery/mod.rs,
 * model_card.rs), written by hand so the simulator shares no parser or model with the router. Instance IDs are u64 JSON
 * numbers, written unsigned.
 */
final class DynamoJson {
    private DynamoJson() {
    }

    static String endpoint(String namespace, String component, String endpoint, long instanceId, String tcp) {
        return "{\"type\":\"Endpoint\",\"component\":" + str(component) + ",\"endpoint\":" + str(endpoint)
                + ",\"namespace\":" + str(namespace) + ",\"instance_id\":" + Long.toUnsignedString(instanceId)
                + ",\"transport\":{\"tcp\":" + str(tcp) + "}}";
    }

    static String model(String namespace, String component, String endpoint, long instanceId, String cardJson) {
        return "{\"type\":\"Model\",\"namespace\":" + str(namespace) + ",\"component\":" + str(component)
                + ",\"endpoint\":" + str(endpoint) + ",\"instance_id\":" + Long.toUnsignedString(instanceId)
                + ",\"card_json\":" + cardJson + "}";
    }

    /**
     * The ModelDeploymentCard, fields in upstream's order; a prefill worker's {@code model_type} is Prefill, and
     * {@code max_num_seqs} is the simulated slots per rank.
     */
    static String card(SimFleet.Options o, Pool pool) {
        return card(o, pool, null);
    }

    /**
     * The card; with {@code artifacts} (the fleet's KV tokenizer), its {@code tokenizer} and
     * {@code prompt_formatter} name those files as upstream's {@code CheckedFile}s.
     */
    static String card(SimFleet.Options o, Pool pool, @Nullable String artifacts) {
        String modelType = pool.role() == DirectFrontend.Role.PREFILL ? "Prefill" : "Chat | Completions";
        return "{\"display_name\":" + str(pool.model()) + ",\"slug\":" + str(slug(pool.model()))
                + ",\"model_info\":null," + (artifacts == null ? "\"tokenizer\":null" : artifacts)
                + ",\"context_length\":" + o.maxNumBatchedTokens()
                + ",\"kv_cache_block_size\":" + o.kvCacheBlockSize()
                + ",\"migration_limit\":0"
                + ",\"model_type\":" + str(modelType)
                + ",\"model_input\":\"Tokens\""
                + ",\"runtime_config\":{\"total_kv_blocks\":" + o.totalKvBlocks()
                + ",\"max_num_seqs\":" + o.slots() + ",\"max_num_batched_tokens\":" + o.maxNumBatchedTokens()
                + ",\"tool_call_parser\":null,\"reasoning_parser\":null"
                + ",\"exclude_tools_when_tool_choice_none\":true,\"data_parallel_start_rank\":0"
                + ",\"data_parallel_size\":" + pool.dpSize() + ",\"enable_local_indexer\":true,\"enable_eagle\":false}"
                + ",\"media_decoder\":null,\"media_fetcher\":null}";
    }

    /** The later event-channel record: endpoint scope, the publisher's own ID, a direct ZMQ endpoint. */
    static String eventChannel(String namespace, String component, String endpoint, String topic, long publisherId,
            String zmq) {
        return "{\"type\":\"EventChannel\",\"scope\":{\"kind\":\"endpoint\",\"endpoint\":{\"namespace\":"
                + str(namespace) + ",\"component\":" + str(component) + ",\"name\":" + str(endpoint) + "}}"
                + ",\"topic\":" + str(topic) + ",\"instance_id\":" + Long.toUnsignedString(publisherId)
                + ",\"transport\":{\"kind\":\"Zmq\",\"config\":{\"endpoint\":" + str(zmq) + "}}}";
    }

    /**
     * The card fields naming a model's tokenizer artifacts: {@code "tokenizer":{"hf_tokenizer_json":CheckedFile}}
     * and, with a tokenizer config, {@code "prompt_formatter":{"hf_tokenizer_config_json":CheckedFile}}.
     */
    static String tokenizerArtifacts(java.nio.file.Path tokenizerJson, java.nio.file.@Nullable Path tokenizerConfig) {
        String out = "\"tokenizer\":{\"hf_tokenizer_json\":" + checkedFile(tokenizerJson) + "}";
        if (tokenizerConfig != null) {
            out += ",\"prompt_formatter\":{\"hf_tokenizer_config_json\":" + checkedFile(tokenizerConfig) + "}";
        }
        return out;
    }

    private static String checkedFile(java.nio.file.Path file) {
        return "{\"path\":" + str(file.toAbsolutePath().toString()) + ",\"checksum\":" + str(Blake3.checksum(file))
                + "}";
    }

    /** Upstream's slug: lower case, {@code a-z0-9-_} only, anything else becomes {@code _}. */
    static String slug(String name) {
        StringBuilder out = new StringBuilder();
        for (char c : name.toLowerCase(Locale.ROOT).toCharArray()) {
            out.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ? c : '_');
        }
        return out.toString();
    }

    static String str(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
