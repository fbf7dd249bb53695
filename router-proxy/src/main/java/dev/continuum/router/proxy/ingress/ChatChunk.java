package dev.continuum.router.proxy.ingress;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.continuum.router.proxy.IngressConverter.InvalidResponse;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a stream converter needs of one chat-completion chunk, read with Jackson's streaming parser (no tree:
 * this runs once per streamed token): the first choice's text, tool-call fragments, finish reason and matched
 * stop string, the usage when the chunk carries it, and whether the chunk is an error instead.
 *
 * @param error the chunk is {@code {"error": ...}} (the rest is then empty)
 */
public record ChatChunk(String id, String model, long created, String content, List<ToolCallDelta> toolCalls,
                        @Nullable String finishReason, @Nullable String matchedStop, @Nullable Usage usage,
                        boolean error) {
    private static final JsonFactory JSON = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build()).build();
    /** A chunk of a direct buffer is copied here to be parsed (event loops only: one array per thread). */
    private static final int SCRATCH_BYTES = 16 * 1024;
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[SCRATCH_BYTES]);

    /** One fragment of a tool call: the first names it ({@code id}, {@code name}), later ones add arguments. */
    public record ToolCallDelta(int index, @Nullable String id, @Nullable String name, String arguments) {
    }

    /** The chunk's usage; absent fields are 0. */
    public record Usage(long promptTokens, long completionTokens, long cachedTokens, long reasoningTokens) {
    }

    /** The chunk with its {@code id}, {@code model} and {@code created}. */
    public static ChatChunk read(ByteBuf data) throws InvalidResponse {
        return read(data, true);
    }

    /**
     * @param header whether to read {@code id}, {@code model} and {@code created} (a stream needs them from its
     *               first chunk only; otherwise they are "" and 0, and no string is made for them)
     */
    public static ChatChunk read(ByteBuf data, boolean header) throws InvalidResponse {
        int length = data.readableBytes();
        byte[] bytes;
        int offset;
        if (data.hasArray()) {
            bytes = data.array();
            offset = data.arrayOffset() + data.readerIndex();
        } else {
            // Jackson reads a byte array in place; a direct buffer is copied into the thread's scratch array.
            bytes = length <= SCRATCH_BYTES ? SCRATCH.get() : new byte[length];
            data.getBytes(data.readerIndex(), bytes, 0, length);
            offset = 0;
        }
        try (JsonParser p = JSON.createParser(bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidResponse("a chunk is not a JSON object");
            }
            Builder b = new Builder();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "id" -> b.id = header ? text(p, v, b.id) : keep(p, b.id);
                    case "model" -> b.model = header ? text(p, v, b.model) : keep(p, b.model);
                    case "created" -> b.created = header ? number(p, v) : keep(p, b.created);
                    case "error" -> {
                        b.error = true;
                        p.skipChildren();
                    }
                    case "usage" -> b.usage = v == JsonToken.START_OBJECT ? usage(p) : skip(p, null);
                    case "choices" -> {
                        if (v == JsonToken.START_ARRAY) {
                            choices(p, b);
                        } else {
                            p.skipChildren();
                        }
                    }
                    default -> p.skipChildren();
                }
            }
            return new ChatChunk(b.id, b.model, b.created, b.content, b.calls, b.finish, b.stop, b.usage, b.error);
        } catch (IOException e) {
            throw new InvalidResponse("a chunk is not valid JSON");
        }
    }

    private static final class Builder {
        String id = "";
        String model = "";
        long created;
        String content = "";
        List<ToolCallDelta> calls = List.of();
        @Nullable String finish;
        @Nullable String stop;
        @Nullable Usage usage;
        boolean error;

        void call(ToolCallDelta call) {
            if (calls.isEmpty()) {
                calls = new ArrayList<>(2);
            }
            calls.add(call);
        }
    }

    private static String text(JsonParser p, JsonToken v, String otherwise) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return otherwise;
    }

    private static <T> @Nullable T skip(JsonParser p, @Nullable T value) throws IOException {
        p.skipChildren();
        return value;
    }

    /** Skips the value and keeps {@code value} (no string is made for a field not wanted). */
    private static String keep(JsonParser p, String value) throws IOException {
        p.skipChildren();
        return value;
    }

    private static long keep(JsonParser p, long value) throws IOException {
        p.skipChildren();
        return value;
    }

    /** The first choice only (the wires have one); the others are skipped. */
    private static void choices(JsonParser p, Builder b) throws IOException {
        boolean first = true;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY && t != null) {
            if (!first || t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            first = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "delta" -> {
                        if (v == JsonToken.START_OBJECT) {
                            delta(p, b);
                        } else {
                            p.skipChildren();
                        }
                    }
                    case "finish_reason" -> b.finish = v == JsonToken.VALUE_STRING ? p.getText() : skip(p, b.finish);
                    case "stop_reason" -> b.stop = v == JsonToken.VALUE_STRING ? p.getText() : skip(p, null);
                    default -> p.skipChildren();
                }
            }
        }
    }

    private static void delta(JsonParser p, Builder b) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            if (name.equals("content") && v == JsonToken.VALUE_STRING) {
                b.content = b.content.isEmpty() ? p.getText() : b.content + p.getText();
            } else if (name.equals("tool_calls") && v == JsonToken.START_ARRAY) {
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    b.call(toolCall(p));
                }
            } else {
                p.skipChildren();
            }
        }
    }

    private static ToolCallDelta toolCall(JsonParser p) throws IOException {
        int index = 0;
        String id = null;
        String name = null;
        String arguments = "";
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "index" -> index = v == JsonToken.VALUE_NUMBER_INT ? p.getIntValue() : -1;
                case "id" -> id = v == JsonToken.VALUE_STRING ? p.getText() : skip(p, null);
                case "function" -> {
                    if (v != JsonToken.START_OBJECT) {
                        p.skipChildren();
                        break;
                    }
                    while (p.nextToken() == JsonToken.FIELD_NAME) {
                        String f = p.currentName();
                        JsonToken fv = p.nextToken();
                        if (f.equals("name") && fv == JsonToken.VALUE_STRING) {
                            name = p.getText();
                        } else if (f.equals("arguments") && fv == JsonToken.VALUE_STRING) {
                            arguments = p.getText();
                        } else {
                            p.skipChildren();
                        }
                    }
                }
                default -> p.skipChildren();
            }
        }
        return new ToolCallDelta(index, id, name, arguments);
    }

    private static Usage usage(JsonParser p) throws IOException {
        long prompt = 0;
        long completion = 0;
        long cached = 0;
        long reasoning = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken v = p.nextToken();
            switch (name) {
                case "prompt_tokens" -> prompt = number(p, v);
                case "completion_tokens" -> completion = number(p, v);
                case "prompt_tokens_details" -> cached = nested(p, v, "cached_tokens");
                case "completion_tokens_details" -> reasoning = nested(p, v, "reasoning_tokens");
                default -> p.skipChildren();
            }
        }
        return new Usage(prompt, completion, cached, reasoning);
    }

    /** A count or a time: an integer (saturated at the largest long), else 0; never negative. */
    private static long number(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.VALUE_NUMBER_INT) {
            p.skipChildren();
            return 0;
        }
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER ? Long.MAX_VALUE : Math.max(0, p.getLongValue());
    }

    private static long nested(JsonParser p, JsonToken v, String field) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return 0;
        }
        long n = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if (name.equals(field)) {
                n = number(p, t);
            } else {
                p.skipChildren();
            }
        }
        return n;
    }
}
