package dev.continuum.router.core.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The annotated sample config that {@code --generate-config} prints: every section and key with its default. */
public final class SampleConfig {
    static final String RESOURCE = "sample-config.yaml";

    private SampleConfig() {
    }

    /** The sample as YAML text with comments. */
    public static String text() {
        try (InputStream in = SampleConfig.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing classpath resource " + RESOURCE);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
