package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.LoadResult;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code --generate-config} covers the Dynamo sections this build registers, each key written at its
 * default: its readback is the readback of an empty config (MainTest checks it validates with no warning).
 */
class GeneratedConfigTest {
    @Test
    void theSampleHasEveryDynamoSectionAtItsDefaults() throws Exception {
        ConfigLoader loader = Main.loader(CommandLine.parse("config", "show"), Map.of());
        String sample = GeneratedConfig.text();

        LoadResult fromSample = loader.loadString(sample);
        LoadResult empty = loader.loadString("");

        assertThat(fromSample.problems()).isEmpty();
        Map<String, Object> written = DeployFiles.at(DeployFiles.yamlMap(sample), "dynamo");
        for (DynamoSection<?> section : DynamoSections.create(Map.of()).all()) {
            assertThat(written).as("dynamo." + section.key() + " in the sample").containsKey(section.key());
        }
        Object sampleDynamo = DeployFiles.yamlMap(loader.renderer().yaml(fromSample.orThrow())).get("dynamo");
        Object defaultDynamo = DeployFiles.yamlMap(loader.renderer().yaml(empty.orThrow())).get("dynamo");
        assertThat(sampleDynamo).isEqualTo(defaultDynamo);
        assertThat(sample).startsWith(dev.continuum.router.core.config.SampleConfig.text().substring(0, 200));
    }
}
