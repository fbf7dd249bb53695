package dev.continuum.router.app;

import dev.continuum.router.core.config.SampleConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * What {@code --generate-config} prints: router-core's annotated sample of the core sections, with its
 * {@code dynamo:} stub replaced by the sections of the Dynamo modules this build registers
 * ({@link DynamoSections}), each key at its default and commented.
 */
final class GeneratedConfig {
    private static final String DYNAMO_SAMPLE = "sample-dynamo.yaml";

    private GeneratedConfig() {
    }

    static String text() {
        String core = SampleConfig.text();
        int dynamo = core.lastIndexOf("\ndynamo:");
        if (dynamo < 0) {
            throw new IllegalStateException("router-core's sample config has no dynamo: section to replace");
        }
        return core.substring(0, dynamo + 1) + resource(DYNAMO_SAMPLE);
    }

    private static String resource(String name) {
        try (InputStream in = GeneratedConfig.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing classpath resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
