package dev.continuum.router.kv.backend.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.kv.hash.BlockHasher;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Binds {@code dynamo.kv_cache_index.selection}. */
final class SelectionNodes {
    private static final Pattern BLAKE3 = Pattern.compile("blake3:[0-9a-f]{64}");

    private SelectionNodes() {
    }

    static BackendSelectionConfig bind(ConfigNode node) {
        BackendSelectionConfig d = BackendSelectionConfig.DEFAULTS;
        boolean enabled = node.get("enabled").asBool(d.enabled());
        ConfigNode modelsNode = node.get("models");
        List<ConfigNode> entries = modelsNode.elements();
        if (entries.size() > BackendSelectionConfig.MAX_MODELS) {
            modelsNode.error(entries.size() + " entries (expected: at most " + BackendSelectionConfig.MAX_MODELS + ")");
            return d;
        }
        List<BackendSelectionConfig.Model> models = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (ConfigNode entry : entries) {
            ConfigNode modelNode = entry.get("model");
            String model = modelNode.asStringOrNull();
            if (model == null || model.isEmpty() || model.length() > 256) {
                modelNode.error((model == null ? "missing" : Problems.render(model))
                        + " (expected: a model name, 1..256 characters)");
                continue;
            }
            if (!seen.add(model)) {
                modelNode.error(Problems.render(model) + " (expected: each model once)");
                continue;
            }
            ConfigNode tokenizerNode = entry.get("tokenizer");
            if (!tokenizerNode.isPresent()) {
                tokenizerNode.error("missing (expected: {path, blake3} of the model's tokenizer.json)");
                continue;
            }
            BackendSelectionConfig.Artifact tokenizer = artifact(tokenizerNode);
            ConfigNode configNode = entry.get("tokenizer_config");
            BackendSelectionConfig.Artifact tokenizerConfig = configNode.isPresent() ? artifact(configNode) : null;
            int blockSize = entry.get("block_size").asInt(BackendSelectionConfig.DEFAULT_BLOCK_SIZE,
                    BlockHasher.MIN_BLOCK_SIZE, BlockHasher.MAX_BLOCK_SIZE);
            if (tokenizer != null && (tokenizerConfig != null || !configNode.isPresent())) {
                models.add(new BackendSelectionConfig.Model(model, tokenizer, tokenizerConfig, blockSize));
            }
        }
        return new BackendSelectionConfig(enabled, models);
    }

    private static BackendSelectionConfig.@Nullable Artifact artifact(ConfigNode node) {
        ConfigNode pathNode = node.get("path");
        String path = pathNode.asStringOrNull();
        if (path == null || path.isEmpty() || path.length() > 4096) {
            pathNode.error((path == null ? "missing" : Problems.render(path))
                    + " (expected: a path or URL, 1..4096 characters)");
            return null;
        }
        ConfigNode sumNode = node.get("blake3");
        String sum = sumNode.asStringOrNull();
        if (sum == null || !BLAKE3.matcher(sum).matches()) {
            sumNode.error((sum == null ? "missing" : Problems.render(sum))
                    + " (expected: blake3: and 64 lowercase hex digits, as b3sum prints them)");
            return null;
        }
        return new BackendSelectionConfig.Artifact(path, sum);
    }
}
