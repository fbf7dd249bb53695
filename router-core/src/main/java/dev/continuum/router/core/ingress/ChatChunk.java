package dev.continuum.router.core.ingress;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import dev.continuum.router.core.proxy.IngressConverter.InvalidResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import java.io.IOException;
import java.io.InputStream;
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

    /** One fragment of a tool call: the first names it ({@code id}, {@code name}), later ones add arguments. */
    public record ToolCallDelta(int index, @Nullable String id, @Nullable String name, String arguments) {
    }

    /** The chunk's usage; absent fields are 0. */
    public record Usage(long promptTokens, long completionTokens, long cachedTokens, long reasoningTokens) {
    }

    public static ChatChunk read(ByteBuf data) throws InvalidResponse {
        try (InputStream in = new ByteBufInputStream(data.duplicate()); JsonParser p = JSON.createParser(in)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new InvalidResponse("a chunk is not a JSON object");
            }
            Builder b = new Builder();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                switch (name) {
                    case "id" -> b.id = text(p, v, b.id);
                    case "model" -> b.model = text(p, v, b.model);
                    case "created" -> b.created = number(p, v);
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
            return new ChatChunk(b.id, b.model, b.created, b.content.toString(), b.calls, b.finish, b.stop, b.usage,
                    b.error);
        } catch (IOException e) {
            throw new InvalidResponse("a chunk is not valid JSON");
        }
    }

    private static final class Builder {
        String id = "";
        String model = "";
        long created;
        final StringBuilder content = new StringBuilder();
        final List<ToolCallDelta> calls = new ArrayList<>(0);
        @Nullable String finish;
        @Nullable String stop;
        @Nullable Usage usage;
        boolean error;
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
                b.content.append(p.getText());
            } else if (name.equals("tool_calls") && v == JsonToken.START_ARRAY) {
                while (p.nextToken() == JsonToken.START_OBJECT) {
                    b.calls.add(toolCall(p));
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
