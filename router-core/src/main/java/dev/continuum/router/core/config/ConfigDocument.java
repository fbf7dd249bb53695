package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeContext;
import dev.continuum.router.core.config.internal.TreeNode;
import dev.continuum.router.core.config.internal.YamlTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A YAML config file other than the router's own (the agents' files), read with the same rules as the router's:
 * interpolation, typed getters reporting {@code path: value (expected: ...)}, and unknown keys reported after
 * binding. This is the public way for other modules to read such a file; the tree behind it is internal.
 *
 * <p>Usage: {@code read} the file, bind {@link #root()} into a record, then {@link #reportUnknownKeys()}.
 */
public final class ConfigDocument {
    private final TreeNode root;

    private ConfigDocument(TreeNode root) {
        this.root = root;
    }

    /**
     * The file parsed into a tree whose problems go to {@code problems}; null (with the problem reported) when
     * the file cannot be read or is not a YAML document.
     */
    public static @Nullable ConfigDocument read(Path file, Map<String, String> environment, Problems problems) {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            problems.error("", "cannot read " + file + " (" + e.getClass().getSimpleName() + ")");
            return null;
        }
        TreeNode root = YamlTrees.parse(text, file.toString(), "", new TreeContext(problems, environment));
        return root == null ? null : new ConfigDocument(root);
    }

    /** The document's top-level node. */
    public ConfigNode root() {
        return root;
    }

    /** Reports every present key that binding never asked for, as a warning with the nearest known key. */
    public void reportUnknownKeys() {
        root.reportUnknownKeys();
    }
}
