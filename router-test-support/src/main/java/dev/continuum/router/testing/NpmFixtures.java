package dev.continuum.router.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The npm packages tests run with {@code node} (official SDKs, reference tokenizers), installed by the test
 * command from the lockfiles under {@code test-fixtures/npm/<set>/} before Maven runs: tests read that
 * install and never reach a registry themselves.
 */
public final class NpmFixtures {
    private NpmFixtures() {
    }

    /** The {@code node_modules} directory of one fixture set; fails with the command to run when absent. */
    public static Path nodeModules(String set) {
        Path dir = setDirectory(set).resolve("node_modules");
        if (!Files.isDirectory(dir)) {
            throw new IllegalStateException("npm fixture set '" + set + "' is not installed at " + dir
                    + "; run bin/npm-fixtures (bin/test runs it)");
        }
        return dir;
    }

    /** {@code test-fixtures/npm/<set>} of the checkout the tests run from. */
    public static Path setDirectory(String set) {
        return projectRoot().resolve("test-fixtures").resolve("npm").resolve(set);
    }

    /** The checkout's root: the nearest directory at or above the working directory holding {@code mvnw}. */
    public static Path projectRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("mvnw")) && Files.isDirectory(d.resolve("test-fixtures"))) {
                return d;
            }
        }
        throw new IllegalStateException("no project root (a directory with mvnw and test-fixtures/) above " + dir);
    }
}
