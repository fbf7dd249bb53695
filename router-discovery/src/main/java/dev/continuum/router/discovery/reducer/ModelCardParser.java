package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.discovery.reducer.JsonFields.field;
import static dev.continuum.router.discovery.reducer.JsonFields.intAtLeast;
import static dev.continuum.router.discovery.reducer.JsonFields.longAtLeast;
import static dev.continuum.router.discovery.reducer.JsonFields.nonEmptyText;
import static dev.continuum.router.discovery.reducer.JsonFields.text;

import com.fasterxml.jackson.databind.JsonNode;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.ModelCard.ArtifactFile;
import dev.continuum.router.discovery.ModelCard.CardArtifacts;
import dev.continuum.router.discovery.ModelCard.DisaggregatedEndpoint;
import dev.continuum.router.discovery.ModelCard.WorkerCapacity;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads the typed subset of a model deployment card field by field. Capacities that pickers divide by
 * ({@code kv_cache_block_size}, {@code total_kv_blocks}, {@code max_num_batched_tokens}, ...) must be
 * positive, or they read as unknown: a zero from a misconfigured worker must not become a division by zero.
 */
final class ModelCardParser {
    /** {@code ModelType::Prefill} in the bitflags (Chat=1, Completions=2, ..., Prefill=16). */
    private static final long PREFILL_FLAG = 16;
    private static final Pattern BLAKE3 = Pattern.compile("blake3:([0-9a-fA-F]{64})");
    private static final List<String> RELEASE_FIELDS = List.of("dynamo_version", "runtime_version", "version",
            "release");
    private static final List<String> CHAT_TEMPLATE_VARIANTS = List.of("hf_chat_template", "hf_chat_template_jinja",
            "hf_chat_template_json");

    private ModelCardParser() {
    }

    /**
     * @param card    the {@code card_json} value; anything but an object yields an all-unknown typed subset
     * @param rawCard the card's verbatim text, already bounded by the caller (null when over the limit)
     */
    static ModelCard parse(@Nullable JsonNode card, @Nullable String rawCard, StringInterner strings) {
        if (card == null || !card.isObject()) {
            return new ModelCard(null, null, false, null, WorkerCapacity.UNKNOWN, null, null, null,
                    CardArtifacts.NONE, null, rawCard);
        }
        JsonNode runtime = field(card, "runtime_config");
        if (runtime != null && !runtime.isObject()) {
            runtime = null;
        }
        String model = nonEmptyText(card, "display_name");
        if (model == null) {
            model = nonEmptyText(card, "name");
        }
        Long contextLength = longAtLeast(card, "context_length", 1);
        if (contextLength == null) {
            contextLength = longAtLeast(runtime, "context_length", 1);
        }
        WorkerCapacity capacity = new WorkerCapacity(
                longAtLeast(runtime, "total_kv_blocks", 1),
                longAtLeast(runtime, "max_num_batched_tokens", 1),
                longAtLeast(runtime, "max_num_seqs", 1),
                contextLength);
        return new ModelCard(
                strings.intern(model),
                strings.intern(text(card, "worker_type")),
                hasPrefillFlag(field(card, "model_type")),
                intAtLeast(card, "kv_cache_block_size", 1),
                capacity,
                intAtLeast(runtime, "data_parallel_start_rank", 0),
                intAtLeast(runtime, "data_parallel_size", 1),
                disaggregatedEndpoint(field(runtime, "disaggregated_endpoint")),
                new CardArtifacts(
                        tokenizer(field(card, "tokenizer")),
                        promptFormatter(field(card, "prompt_formatter")),
                        promptFormatter(field(card, "chat_template_file"))),
                release(card),
                rawCard,
                strings.intern(nonEmptyText(field(card, "lora"), "name")));
    }

    /** bitflags-2 serde writes {@code "Chat | Completions"}; older or foreign writers may use numbers or lists. */
    static boolean hasPrefillFlag(@Nullable JsonNode modelType) {
        if (modelType == null) {
            return false;
        }
        if (modelType.isTextual()) {
            for (String flag : modelType.textValue().split("\\|")) {
                if (flag.trim().equalsIgnoreCase("Prefill")) {
                    return true;
                }
            }
            return false;
        }
        if (modelType.isIntegralNumber() && modelType.canConvertToLong()) {
            return (modelType.longValue() & PREFILL_FLAG) != 0;
        }
        if (modelType.isArray()) {
            for (JsonNode element : modelType) {
                if (element.isTextual() && element.textValue().trim().equalsIgnoreCase("Prefill")) {
                    return true;
                }
            }
        }
        return false;
    }

    private static @Nullable DisaggregatedEndpoint disaggregatedEndpoint(@Nullable JsonNode value) {
        if (value == null) {
            return null;
        }
        if (value.isTextual()) {
            return value.textValue().isEmpty() ? null : new DisaggregatedEndpoint(value.textValue(), null, null);
        }
        if (value.isObject()) {
            String host = nonEmptyText(value, "bootstrap_host");
            Integer port = intAtLeast(value, "bootstrap_port", 0);
            if (port != null && port > 65_535) {
                port = null;
            }
            return host == null && port == null ? null : new DisaggregatedEndpoint(null, host, port);
        }
        return null;
    }

    /** {@code {"hf_tokenizer_json": CheckedFile}} or {@code {"tik_token_model": CheckedFile}}. */
    private static @Nullable ArtifactFile tokenizer(@Nullable JsonNode value) {
        for (String kind : List.of("hf_tokenizer_json", "tik_token_model")) {
            ArtifactFile file = checkedFile(kind, field(value, kind), false);
            if (file != null) {
                return file;
            }
        }
        return null;
    }

    /**
     * {@code {"hf_tokenizer_config_json": CheckedFile}} or a chat template variant
     * {@code {"hf_chat_template": {"is_custom": bool, "file": CheckedFile}}}.
     */
    private static @Nullable ArtifactFile promptFormatter(@Nullable JsonNode value) {
        ArtifactFile config = checkedFile("hf_tokenizer_config_json", field(value, "hf_tokenizer_config_json"), false);
        if (config != null) {
            return config;
        }
        for (String kind : CHAT_TEMPLATE_VARIANTS) {
            JsonNode variant = field(value, kind);
            if (variant == null) {
                continue;
            }
            JsonNode custom = field(variant, "is_custom");
            ArtifactFile file = checkedFile(kind, field(variant, "file"), custom != null && custom.isBoolean()
                    && custom.booleanValue());
            if (file != null) {
                return file;
            }
        }
        return null;
    }

    /** {@code {"path": "...", "checksum": "blake3:<64 hex>", "size"?: n}}; a checksum of another form reads as null. */
    private static @Nullable ArtifactFile checkedFile(String kind, @Nullable JsonNode value, boolean custom) {
        String path = nonEmptyText(value, "path");
        if (path == null) {
            return null;
        }
        String checksum = text(value, "checksum");
        String blake3 = null;
        if (checksum != null) {
            var matcher = BLAKE3.matcher(checksum);
            if (matcher.matches()) {
                blake3 = matcher.group(1).toLowerCase(Locale.ROOT);
            }
        }
        return new ArtifactFile(kind, path, blake3, custom, longAtLeast(value, "size", 0));
    }

    private static @Nullable String release(JsonNode card) {
        for (String name : RELEASE_FIELDS) {
            String value = nonEmptyText(card, name);
            if (value != null) {
                return value;
            }
        }
        return null;
    }
}
