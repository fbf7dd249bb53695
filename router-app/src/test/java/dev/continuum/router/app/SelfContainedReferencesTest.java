package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * The repository stands on its own: code, tests, test resources, docs and scripts cite the project's own
 * {@code docs/} or upstream source files, never documents that live outside the repository. "Seed" keeps one
 * meaning, the first listing of a discovery pass; the phrases that use it so are allowed one by one.
 */
class SelfContainedReferencesTest {
    /** Citations of documents outside the repository, matched case-insensitively. */
    private static final List<String> FORBIDDEN = List.of("the seed", "seed's", "decisions.md", "dynamo-wire",
            "../shared", "/shared/", "seeds/");
    /**
     * "the seed" meaning a discovery pass's first listing. {@code decisions.md} is forbidden only as the outside
     * document's upper-case name, so the project's own {@code docs/decisions.md} is allowed.
     */
    private static final List<String> ALLOWED = List.of("apply the seed as", "changes made after the seed",
            "the seed is published", "docs/decisions.md", "(decisions.md", "[decisions.md]");
    private static final List<String> TREES = List.of("docs", "bench", "bin", "deploy", "config-templates", "scripts");
    private static final long MAX_FILE_BYTES = 4L * 1024 * 1024;

    @Test
    void nothingCitesDocumentsOutsideTheRepository() throws IOException {
        Path root = repositoryRoot();
        List<Path> files = filesToCheck(root);
        assertThat(files).as("the walk reaches the sources and the docs")
                .anyMatch(p -> p.endsWith(Path.of("docs", "decisions.md")))
                .anyMatch(p -> p.endsWith(Path.of("router-load", "src", "main", "java", "dev", "continuum", "router",
                        "load", "LoadStore.java")))
                .hasSizeGreaterThan(300);
        List<String> offending = new ArrayList<>();
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file, StandardCharsets.ISO_8859_1);
            for (int i = 0; i < lines.size(); i++) {
                String hit = forbiddenIn(lines.get(i));
                if (hit != null) {
                    offending.add(root.relativize(file) + ":" + (i + 1) + " cites \"" + hit + "\"");
                }
            }
        }
        assertThat(offending).as("lines citing documents outside the repository (cite docs/ or upstream sources)")
                .isEmpty();
    }

    @Test
    void theCheckCatchesEachForbiddenCitationAndAllowsTheDiscoverySense() {
        assertThat(forbiddenIn(" * (the seed's bound)")).isEqualTo("the seed");
        assertThat(forbiddenIn("// see DECISIONS.md")).isEqualTo("decisions.md");
        assertThat(forbiddenIn("written from dynamo-wire.md 3.2")).isEqualTo("dynamo-wire");
        assertThat(forbiddenIn("[spec](../shared/spec/x.md)")).isEqualTo("../shared");
        assertThat(forbiddenIn(" * apply the seed as one resync, then follow changes made after the seed.")).isNull();
        assertThat(forbiddenIn("see docs/decisions.md and [decisions.md](decisions.md#roles)")).isNull();
        assertThat(forbiddenIn("apply the seed as one resync; the seed's bound")).isEqualTo("the seed");
    }

    /** The first forbidden phrase left in {@code line} once the allowed phrases are taken out, or null. */
    private static @Nullable String forbiddenIn(String line) {
        String text = line.toLowerCase(Locale.ROOT);
        for (String allowed : ALLOWED) {
            text = text.replace(allowed, " ");
        }
        for (String forbidden : FORBIDDEN) {
            if (text.contains(forbidden)) {
                return forbidden;
            }
        }
        return null;
    }

    private static List<Path> filesToCheck(Path root) throws IOException {
        List<Path> starts = new ArrayList<>();
        try (Stream<Path> top = Files.list(root)) {
            top.filter(p -> Files.isDirectory(p) && p.getFileName().toString().startsWith("router-"))
                    .map(p -> p.resolve("src")).filter(Files::isDirectory).forEach(starts::add);
        }
        TREES.stream().map(root::resolve).filter(Files::isDirectory).forEach(starts::add);
        starts.add(root.resolve("README.md"));
        Path self = root.resolve("router-app/src/test/java/dev/continuum/router/app/SelfContainedReferencesTest.java");
        List<Path> files = new ArrayList<>();
        for (Path start : starts) {
            try (Stream<Path> walk = Files.walk(start)) {
                walk.filter(Files::isRegularFile)
                        .filter(p -> !p.equals(self))
                        .filter(p -> !isBuildOutput(root.relativize(p)))
                        .filter(p -> size(p) <= MAX_FILE_BYTES)
                        .forEach(files::add);
            }
        }
        return files;
    }

    private static boolean isBuildOutput(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.equals("target") || name.equals("node_modules") || name.startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return Long.MAX_VALUE;
        }
    }

    private static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (!Files.isDirectory(dir.resolve("docs")) || !Files.isRegularFile(dir.resolve("README.md"))) {
            dir = dir.getParent();
        }
        return dir;
    }
}
