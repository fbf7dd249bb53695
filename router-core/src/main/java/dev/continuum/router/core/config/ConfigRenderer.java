package dev.continuum.router.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.continuum.router.core.config.internal.ReadbackJson;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.common.FlowStyle;

/**
 * Turns a {@link RouterConfig} back into its YAML shape for {@code config show} and {@code GET /admin/config}.
 * The records are the single description of that shape: Jackson writes them (snake_case keys, null components
 * left out, the value types as {@link ReadbackJson} writes them), every {@link Secret} as {@link Secret#MASK}.
 * Apart from the masks, the readback loads back to an equal config: durations and sizes are written in units
 * the loader reads, and only inline API keys are listed (the keys of {@code api_keys_file} stay in that file,
 * whose path is shown). Thread-safe.
 */
public final class ConfigRenderer {
    private static final TypeReference<LinkedHashMap<String, Object>> TREE = new TypeReference<>() {
    };
    private static final ConfigRenderer INSTANCE = new ConfigRenderer();

    private final ObjectMapper masked = ReadbackJson.mapper(false);
    private final ObjectMapper revealing = ReadbackJson.mapper(true);
    private final ObjectMapper pretty = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ConfigRenderer() {
    }

    /** The renderer; a section's shape comes from its record, so there is nothing to configure. */
    public static ConfigRenderer get() {
        return INSTANCE;
    }

    /** The masked tree: {@code LinkedHashMap}s, {@code List}s, Strings, Numbers, Booleans. */
    public Map<String, Object> tree(RouterConfig config) {
        return masked.convertValue(config, TREE);
    }

    /** The masked readback as YAML. */
    public String yaml(RouterConfig config) {
        DumpSettings settings = DumpSettings.builder()
                .setDefaultFlowStyle(FlowStyle.BLOCK)
                .setIndent(2)
                .setIndicatorIndent(2)
                .setIndentWithIndicator(true)
                .setWidth(120)
                .build();
        return new Dump(settings).dumpToString(tree(config));
    }

    /** The masked readback as JSON (pretty-printed). */
    public String json(RouterConfig config) {
        try {
            return pretty.writeValueAsString(tree(config));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** With {@code reveal}, secrets keep their values: only for tests that load a readback back. */
    Map<String, Object> tree(RouterConfig config, boolean reveal) {
        return (reveal ? revealing : masked).convertValue(config, TREE);
    }
}
