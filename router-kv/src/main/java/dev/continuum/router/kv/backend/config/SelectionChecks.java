package dev.continuum.router.kv.backend.config;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.kv.config.KvConfig;
import java.util.List;
import java.util.Set;

/**
 * The warnings of {@code dynamo.kv_cache_index.selection}: each names what would make a configured index steer
 * nothing, so an index that parses never silently does nothing.
 */
final class SelectionChecks {
    private static final String PATH = "dynamo.kv_cache_index.selection";

    private SelectionChecks() {
    }

    static void run(KvCacheIndexConfig value, RouterConfig config, Problems problems) {
        BackendSelectionConfig selection = value.selection();
        if (value.sources().isEmpty()) {
            if (!selection.models().isEmpty()) {
                problems.warning(PATH + ".models", "no dynamo.kv_cache_index.sources: no backend has a cached"
                        + " prefix, so every request is picked by selection_strategy");
            }
            return;
        }
        if (!selection.enabled()) {
            problems.warning(PATH + ".enabled", "false: the backend KV cache index is kept and exported (metrics)"
                    + " but does not steer backend selection");
            return;
        }
        if (selection.models().isEmpty()) {
            problems.warning(PATH + ".models", "empty: the backend KV cache index steers no request until a model"
                    + " names its tokenizer here");
            return;
        }
        Set<String> pins = config.dynamo().find(KvConfig.class).orElse(KvConfig.DEFAULTS).pinnedHex();
        List<BackendSelectionConfig.Model> models = selection.models();
        for (int i = 0; i < models.size(); i++) {
            BackendSelectionConfig.Model m = models.get(i);
            String path = PATH + ".models[" + i + "]";
            unpinned(path + ".tokenizer.blake3", m.tokenizer(), pins, problems);
            if (m.tokenizerConfig() != null) {
                unpinned(path + ".tokenizer_config.blake3", m.tokenizerConfig(), pins, problems);
            }
            if (!servedWithSource(m.model(), value, config.backends())) {
                problems.warning(path + ".model", Problems.render(m.model()) + " is served by no backend with a"
                        + " dynamo.kv_cache_index source: its requests are picked by selection_strategy");
            }
        }
    }

    private static void unpinned(String path, BackendSelectionConfig.Artifact a, Set<String> pins,
            Problems problems) {
        if (!pins.contains(a.hex())) {
            problems.warning(path, Problems.render(a.blake3()) + " is not in dynamo.kv.pinned_artifacts: the file is"
                    + " never loaded and the model's requests are picked by selection_strategy");
        }
    }

    private static boolean servedWithSource(String model, KvCacheIndexConfig value, List<BackendConfig> backends) {
        for (KvCacheIndexConfig.Source s : value.sources()) {
            for (BackendConfig b : backends) {
                if (b.name().equals(s.backend()) && (b.models().isEmpty() || b.models().contains(model))) {
                    return true;
                }
            }
        }
        return false;
    }
}
