package dev.continuum.router.discovery.reducer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The three etcd keyspaces a Dynamo fleet registers under, each parameterized by namespace. Endpoint and
 * card keys carry the namespace raw; event-channel keys carry it percent-encoded (Dynamo's
 * {@code EventChannelInstanceId::to_path}: ASCII alphanumerics, {@code -} and {@code _} pass, every other
 * byte becomes {@code %XX}).
 */
public enum Keyspace {
    /** {@code v1/instances/<ns>/<component>/<endpoint>/<instance_id:x>}: endpoint records. */
    INSTANCES("v1/instances"),
    /** {@code v1/mdc/<ns>/<component>/<endpoint>/<instance_id:x>[/<model_suffix>]}: model cards. */
    MODEL_CARDS("v1/mdc"),
    /** {@code v1/event_channels/namespace/<ns>/[component/<c>/[endpoint/<e>/]]topic/<t>/<id:x>}. */
    EVENT_CHANNELS("v1/event_channels");

    private final String bucket;

    Keyspace(String bucket) {
        this.bucket = bucket;
    }

    /** The bucket, which is also the file store's directory ({@code root/v1/instances}). */
    public String bucket() {
        return bucket;
    }

    /** The watched prefix for one namespace, ending in {@code /}. */
    public String prefix(String namespace) {
        return this == EVENT_CHANNELS
                ? bucket + "/namespace/" + encodeSegment(namespace) + "/"
                : bucket + "/" + namespace + "/";
    }

    /** Every watched prefix of every namespace, keyspace by keyspace. */
    public static List<String> prefixes(List<String> namespaces) {
        List<String> prefixes = new ArrayList<>();
        for (Keyspace keyspace : values()) {
            for (String namespace : namespaces) {
                prefixes.add(keyspace.prefix(namespace));
            }
        }
        return List.copyOf(prefixes);
    }

    /** The keyspace a full key belongs to, by its bucket. */
    public static Optional<Keyspace> of(String key) {
        for (Keyspace keyspace : values()) {
            if (key.startsWith(keyspace.bucket) && key.length() > keyspace.bucket.length()
                    && key.charAt(keyspace.bucket.length()) == '/') {
                return Optional.of(keyspace);
            }
        }
        return Optional.empty();
    }

    /** Dynamo's event-channel segment encoding. */
    public static String encodeSegment(String segment) {
        StringBuilder out = new StringBuilder(segment.length());
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /**
     * Decodes {@code %XX} escapes once (either hex case). Empty for a truncated or non-hex escape, or bytes
     * that are not UTF-8: such a key is not one Dynamo wrote.
     */
    public static Optional<String> decodeSegment(String segment) {
        if (segment.indexOf('%') < 0) {
            return Optional.of(segment);
        }
        // '%' and hex digits are ASCII, so escapes can be decoded on the UTF-8 bytes directly.
        byte[] in = segment.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(in.length);
        for (int i = 0; i < in.length; i++) {
            if (in[i] == '%') {
                if (i + 2 >= in.length) {
                    return Optional.empty();
                }
                int hi = Character.digit(in[i + 1], 16);
                int lo = Character.digit(in[i + 2], 16);
                if (hi < 0 || lo < 0) {
                    return Optional.empty();
                }
                bytes.write(hi << 4 | lo);
                i += 2;
            } else {
                bytes.write(in[i]);
            }
        }
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes.toByteArray())).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }
}
