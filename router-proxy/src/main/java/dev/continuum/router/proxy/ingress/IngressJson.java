package dev.continuum.router.proxy.ingress;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The JSON the ingresses read and write. Bodies arrive already bounded by the server's body limit; the
 * parser's own limits (nesting depth, string and number lengths) bound what one document may build, so a
 * deeply nested client body is refused rather than exhausting the stack.
 */
public final class IngressJson {
    /** Deeper than any real request: tool schemas nest, but not hundreds of levels. */
    private static final int MAX_NESTING = 128;
    private static final ObjectMapper JSON = mapper();

    private IngressJson() {
    }

    private static ObjectMapper mapper() {
        ObjectMapper m = new ObjectMapper();
        m.getFactory().setStreamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING).build());
        return m;
    }

    public static ObjectNode object() {
        return JsonNodeFactory.instance.objectNode();
    }

    /**
     * The client's body as a JSON object: exactly one JSON value, so bytes after it (a second value, say) are
     * refused rather than silently ignored.
     */
    public static ObjectNode readRequest(ByteBuf body) throws IngressConverter.InvalidRequest {
        JsonNode n;
        try (JsonParser p = parser(body)) {
            n = JSON.readTree(p);
            if (p.nextToken() != null) {
                throw new IngressConverter.InvalidRequest("The request body has data after its JSON value.");
            }
        } catch (StreamConstraintsException e) {
            throw new IngressConverter.InvalidRequest("The request body nests deeper than " + MAX_NESTING
                    + " levels or holds an over-long value.");
        } catch (IOException e) {
            throw new IngressConverter.InvalidRequest("The request body is not valid JSON.");
        }
        if (!(n instanceof ObjectNode o)) {
            throw new IngressConverter.InvalidRequest("The request body must be a JSON object.");
        }
        return o;
    }

    private static JsonParser parser(ByteBuf body) throws IOException {
        int length = body.readableBytes();
        if (body.hasArray()) {
            return JSON.createParser(body.array(), body.arrayOffset() + body.readerIndex(), length);
        }
        byte[] bytes = new byte[length];
        body.getBytes(body.readerIndex(), bytes);
        return JSON.createParser(bytes);
    }

    /** An upstream's JSON (an answer or one event's data). */
    public static JsonNode readResponse(ByteBuf body) throws IngressConverter.InvalidResponse {
        try {
            JsonNode n = readTree(body);
            if (n == null || n.isMissingNode()) {
                throw new IngressConverter.InvalidResponse("empty JSON");
            }
            return n;
        } catch (IOException e) {
            throw new IngressConverter.InvalidResponse("invalid JSON");
        }
    }

    /**
     * The tree of {@code body}'s readable bytes, parsed from a byte array (Jackson's fastest input): a heap buffer's
     * own, a direct buffer's bytes copied out once.
     */
    private static JsonNode readTree(ByteBuf body) throws IOException {
        int length = body.readableBytes();
        if (body.hasArray()) {
            return JSON.readTree(body.array(), body.arrayOffset() + body.readerIndex(), length);
        }
        byte[] bytes = new byte[length];
        body.getBytes(body.readerIndex(), bytes);
        return JSON.readTree(bytes);
    }

    /** Like {@link #readResponse}, null when the bytes are not JSON (error bodies may be anything). */
    public static @Nullable JsonNode readLenient(ByteBuf body) {
        try {
            return readResponse(body);
        } catch (IngressConverter.InvalidResponse e) {
            return null;
        }
    }

    public static ByteBuf write(JsonNode n, ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(256);
        try (OutputStream os = new ByteBufOutputStream(out);
             JsonGenerator g = JSON.getFactory().createGenerator(os)) {
            writeNode(g, n);
        } catch (IOException e) {
            out.release();
            throw new IllegalStateException("writing JSON to memory failed", e);
        }
        return out;
    }

    /** Appends one SSE event ({@code event:} line, one {@code data:} line, blank line) to {@code out}. */
    public static void writeEvent(ByteBuf out, String event, JsonNode data) {
        out.writeCharSequence("event: ", StandardCharsets.US_ASCII);
        out.writeCharSequence(event, StandardCharsets.UTF_8);
        out.writeCharSequence("\ndata: ", StandardCharsets.US_ASCII);
        try (OutputStream os = new ByteBufOutputStream(out);
             JsonGenerator g = JSON.getFactory().createGenerator(os)) {
            // JSON never holds a raw line break, so the data stays on one line.
            writeNode(g, data);
        } catch (IOException e) {
            throw new IllegalStateException("writing JSON to memory failed", e);
        }
        out.writeCharSequence("\n\n", StandardCharsets.US_ASCII);
    }

    /** Appends {@code n} as compact JSON to {@code out}. */
    public static void writeJson(ByteBuf out, JsonNode n) {
        try (OutputStream os = new ByteBufOutputStream(out);
             JsonGenerator g = JSON.getFactory().createGenerator(os)) {
            writeNode(g, n);
        } catch (IOException e) {
            throw new IllegalStateException("writing JSON to memory failed", e);
        }
    }

    /**
     * Writes a tree the ingresses built or read, byte for byte as the mapper would, without the mapper's per-call
     * serializer context (its set-up costs about as much as writing a small answer): objects, arrays, strings,
     * booleans, nulls, longs and doubles directly; any other value (a big or decimal number) through the mapper.
     */
    private static void writeNode(JsonGenerator g, JsonNode n) throws IOException {
        switch (n.getNodeType()) {
            case OBJECT -> {
                g.writeStartObject();
                for (Map.Entry<String, JsonNode> e : n.properties()) {
                    g.writeFieldName(e.getKey());
                    writeNode(g, e.getValue());
                }
                g.writeEndObject();
            }
            case ARRAY -> {
                g.writeStartArray();
                for (int i = 0; i < n.size(); i++) {
                    writeNode(g, n.get(i));
                }
                g.writeEndArray();
            }
            case STRING -> g.writeString(n.textValue());
            case BOOLEAN -> g.writeBoolean(n.booleanValue());
            case NULL -> g.writeNull();
            default -> {
                if (n.isInt() || n.isLong()) {
                    g.writeNumber(n.longValue());
                } else if (n.isDouble()) {
                    g.writeNumber(n.doubleValue());
                } else {
                    JSON.writeTree(g, n);
                }
            }
        }
    }

    /** The bytes of {@code event: <name>\ndata: }, the start of one SSE event (made once per event name). */
    public static byte[] eventStart(String name) {
        return ("event: " + name + "\ndata: ").getBytes(StandardCharsets.UTF_8);
    }

    /** {@code s} (the constant JSON around a per-token value) as UTF-8, made once. */
    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Appends {@code value} as a JSON string. A string with nothing to escape (the usual token) is written as it is,
     * without an intermediate array; one with a quote, a backslash or a control character goes through Jackson's
     * encoder.
     */
    public static void writeJsonString(ByteBuf out, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                out.writeByte('"');
                out.writeBytes(JsonStringEncoder.getInstance().quoteAsUTF8(value));
                out.writeByte('"');
                return;
            }
        }
        out.writeByte('"');
        out.writeCharSequence(value, StandardCharsets.UTF_8);
        out.writeByte('"');
    }

    /**
     * Appends {@code value} as a JSON string byte for byte as a tree written by Jackson holds it: like
     * {@link #writeJsonString}, except that a string with a surrogate pair (an emoji, say) goes through Jackson's
     * generator, which escapes the pair as two {@code \\u} escapes where {@link #writeJsonString} writes its UTF-8.
     * For events whose text the final response, a tree, repeats: the two spell it the same.
     */
    public static void writeJsonStringAsTree(ByteBuf out, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (Character.isSurrogate(value.charAt(i))) {
                try (OutputStream os = new ByteBufOutputStream(out);
                     JsonGenerator g = JSON.getFactory().createGenerator(os)) {
                    g.writeString(value);
                } catch (IOException e) {
                    throw new IllegalStateException("writing JSON to memory failed", e);
                }
                return;
            }
        }
        writeJsonString(out, value);
    }

    /** Appends {@code n} (not negative) in decimal, without making a string. */
    public static void writeDecimal(ByteBuf out, long n) {
        long v = Math.max(0, n);
        long unit = 1;
        while (unit <= v / 10) {
            unit *= 10;
        }
        for (; unit > 0; unit /= 10) {
            out.writeByte((int) ('0' + v / unit % 10));
        }
    }

    /** The text of a node that should be a string; "" for anything else. */
    public static String text(JsonNode n) {
        return n.isTextual() ? n.asText() : "";
    }

    /** The string at {@code n.field}; a missing or non-string value is the request's 400, naming {@code path.field}. */
    public static String requiredText(JsonNode n, String field, String path) throws IngressConverter.InvalidRequest {
        JsonNode v = n.path(field);
        if (!v.isTextual()) {
            throw new IngressConverter.InvalidRequest(path + "." + field + ": Field required (a string).");
        }
        return v.asText();
    }

    /** A client-supplied type name, shortened for quoting in an error message. */
    public static String clip(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }
}
