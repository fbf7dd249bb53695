package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.YamlTrees;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Whether a YAML text holds no config at all: nothing but whitespace, comments and document markers,
 * or a lone null. Loaded, such a document means "all defaults" (no backends, no keys, no admin), which
 * on a reload is almost always a file caught after a truncate and before the write, so the store
 * refuses it instead of applying it.
 */
final class EmptyDocument {
    private EmptyDocument() {
    }

    static boolean isEmpty(String yaml) {
        Optional<Node> document;
        try {
            // The loader's schema, so that "~" and "null" resolve to null here as they do there.
            // Through the loader's depth bound: a deep document is not empty, and must not overflow the stack here.
            document = YamlTrees.compose(yaml, LoadSettings.builder().setSchema(new CoreSchema()).build(), "");
        } catch (YamlEngineException e) {
            return false; // not empty: the loader reports the syntax error with its position
        }
        return document.isEmpty() || document.get().getTag().equals(Tag.NULL);
    }
}
