package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.LoadResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every deploy/examples/* config loads as {@code serve} would load it, with zero warnings (the templates in
 * config-templates are checked the same way by MainTest), and its run.sh starts the router on it.
 */
class ExampleConfigsTest {
    @Test
    void everyExampleConfigLoadsWithoutAWarningAndItsScriptRunsTheRouterOnIt() throws IOException {
        Path examples = DeployFiles.repositoryRoot().resolve("deploy/examples");
        List<Path> dirs;
        try (var list = Files.list(examples)) {
            dirs = list.filter(Files::isDirectory).toList();
        }
        assertThat(dirs).extracting(d -> d.getFileName().toString()).contains("dynamo-direct-shim");
        for (Path dir : dirs) {
            LoadResult r = DeployFiles.validate(dir.resolve("config.yaml"), Map.of("CONTINUUM_ADMIN_TOKEN", "e7c1a9"));
            assertThat(r.problems()).as(dir + ": " + r.report()).isEmpty();
            assertThat(Files.readString(dir.resolve("run.sh"))).as(dir.toString())
                    .contains("continuum-router.jar\" serve --config \"$here/config.yaml\"");
        }
    }
}
