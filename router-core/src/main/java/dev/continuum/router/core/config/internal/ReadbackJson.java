package dev.continuum.router.core.config.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.cfg.EnumFeature;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.core.config.MaskedInReadback;
import dev.continuum.router.core.config.Secret;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The Jackson mapper behind the config readback: record components become snake_case keys, null ones are left
 * out, and the config value types are written the way the loader reads them back (durations {@code 1m30s},
 * sizes {@code 10MiB}, paths and URIs as text, enums by their lower-case name unless they carry a
 * {@code @JsonValue}). A {@link Secret} or a {@link MaskedInReadback} value is written as {@link Secret#MASK} unless
 * the mapper reveals.
 * The shape of a section lives on its record (Jackson annotations); nothing here knows a section.
 */
public final class ReadbackJson {
    private ReadbackJson() {
    }

    /** @param reveal write secrets' values instead of the mask (only for tests that load a readback back) */
    public static ObjectMapper mapper(boolean reveal) {
        SimpleModule module = new SimpleModule("config-readback");
        module.addSerializer(Secret.class, new SecretSerializer(reveal));
        module.addSerializer(MaskedInReadback.class, new MaskedSerializer(reveal));
        module.addSerializer(Duration.class, new DurationSerializer());
        for (Class<?> asText : List.of(ByteSize.class, BindAddress.class, Path.class, URI.class, Instant.class)) {
            module.addSerializer(asText, ToStringSerializer.instance);
        }
        return new ObjectMapper()
                .registerModule(module)
                .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
                .setSerializationInclusion(JsonInclude.Include.NON_NULL)
                .configure(EnumFeature.WRITE_ENUMS_TO_LOWERCASE, true);
    }

    private static final class SecretSerializer extends StdSerializer<Secret> {
        private final boolean reveal;

        SecretSerializer(boolean reveal) {
            super(Secret.class);
            this.reveal = reveal;
        }

        @Override
        public void serialize(Secret value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(reveal ? value.reveal() : Secret.MASK);
        }
    }

    /** Wins over the value's own {@code @JsonValue}: a module's serializer is looked up first. */
    private static final class MaskedSerializer extends StdSerializer<MaskedInReadback> {
        private final boolean reveal;

        MaskedSerializer(boolean reveal) {
            super(MaskedInReadback.class);
            this.reveal = reveal;
        }

        @Override
        public void serialize(MaskedInReadback value, JsonGenerator gen, SerializerProvider provider)
                throws IOException {
            gen.writeString(reveal ? value.revealedValue() : Secret.MASK);
        }
    }

    private static final class DurationSerializer extends StdSerializer<Duration> {
        DurationSerializer() {
            super(Duration.class);
        }

        @Override
        public void serialize(Duration value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(Units.formatDuration(value));
        }
    }

    /** {@code server.socket_mode}: octal with the {@code 0o} prefix the loader reads. */
    public static final class FileModeSerializer extends StdSerializer<Integer> {
        public FileModeSerializer() {
            super(Integer.class);
        }

        @Override
        public void serialize(Integer value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(Units.formatFileMode(value));
        }
    }

    /** A list written as its only element when it has one ({@code server.bind_address}). */
    public static final class OneOrListSerializer extends StdSerializer<List<?>> {
        @SuppressWarnings({"unchecked", "rawtypes"})
        public OneOrListSerializer() {
            super((Class<List<?>>) (Class) List.class);
        }

        @Override
        public void serialize(List<?> value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            if (value.size() == 1) {
                provider.defaultSerializeValue(value.get(0), gen);
            } else {
                gen.writeStartArray();
                for (Object element : value) {
                    provider.defaultSerializeValue(element, gen);
                }
                gen.writeEndArray();
            }
        }
    }
}
