package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeContext;
import dev.continuum.router.core.config.internal.TreeNode;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/** What the section binders of one load pass share. */
final class BindContext {
    final Problems problems;
    final TreeContext tree;
    /** Directory that relative paths ({@code api_keys_file}) resolve against. */
    final Path baseDir;
    final Clock clock;
    final List<DynamoSection<?>> sections;
    /** Trees read besides the main document (the api_keys_file), checked for unknown keys too. */
    final List<TreeNode> extraRoots = new ArrayList<>();
    /** The path of each bound backend, aligned with the bound list (entries that failed are skipped). */
    final List<String> backendPaths = new ArrayList<>();
    /** Names of backends that other sections refer to, checked once every backend is known. */
    final List<BackendReference> backendReferences = new ArrayList<>();

    /** {@code node} (at its path) names the backend {@code name}. */
    record BackendReference(ConfigNode node, String name) {
    }

    BindContext(TreeContext tree, Path baseDir, Clock clock, List<DynamoSection<?>> sections) {
        this.problems = tree.problems();
        this.tree = tree;
        this.baseDir = baseDir;
        this.clock = clock;
        this.sections = List.copyOf(sections);
    }
}
