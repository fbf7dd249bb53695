package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a chat template renders from one chat-completion body: its {@code messages} (a message whose content
 * is an array of parts carries its text parts joined by {@code "\n"}, as dynamo.frontend prepares messages),
 * its {@code tools}, and the body's {@code chat_template_kwargs} (the {@code enable_thinking}-style flags),
 * which may not replace the variables transformers itself passes. {@code spans} says where each message, the tools
 * and the kwargs lie in the body's bytes: the render cache keys a conversation's prefix by them
 * ({@link PrefixRender}).
 */
record ChatPrompt(List<Object> messages, @Nullable List<Object> tools, Map<String, Object> kwargs, Spans spans) {
    /** Variables apply_chat_template sets itself; a body's kwargs cannot override them. */
    static final Set<String> RESERVED = Set.of("messages", "tools", "documents", "add_generation_prompt");

    /** A body that cannot be rendered: not JSON, too deep, or no usable {@code messages}. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String message) {
            super(message, null, false, false);
        }
    }

    /** A JSON reader for bodies, bounded in nesting depth, string and number length before it allocates. */
    static ObjectMapper mapper(PromptLimits limits) {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(limits.maxJsonDepth())
                        .maxStringLength(limits.maxBodyBytes())
                        .maxNumberLength(1_000)
                        .build())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
        return new ObjectMapper(factory);
    }

    static ChatPrompt parse(ObjectMapper mapper, byte[] body) throws Malformed {
        Map<String, Object> top = new LinkedHashMap<>();
        List<Object> rawMessages = null;
        long[] messageSpans = null;
        long toolsSpan = -1;
        long kwargsSpan = -1;
        try (JsonParser parser = mapper.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new Malformed("body is not a JSON object");
            }
            for (JsonToken t = parser.nextToken(); t == JsonToken.FIELD_NAME; t = parser.nextToken()) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (top.containsKey(name)) {
                    throw new Malformed("duplicate field " + name);
                }
                int from = offset(parser.currentTokenLocation().getByteOffset());
                if ("messages".equals(name) && value == JsonToken.START_ARRAY) {
                    rawMessages = new ArrayList<>();
                    SpanList spans = new SpanList();
                    for (JsonToken e = parser.nextToken(); e != JsonToken.END_ARRAY; e = parser.nextToken()) {
                        int at = offset(parser.currentTokenLocation().getByteOffset());
                        rawMessages.add(mapper.readValue(parser, Object.class));
                        spans.add(at, offset(parser.currentLocation().getByteOffset()));
                    }
                    top.put(name, rawMessages);
                    messageSpans = spans.toArray();
                    continue;
                }
                top.put(name, mapper.readValue(parser, Object.class));
                long span = span(from, offset(parser.currentLocation().getByteOffset()));
                if ("tools".equals(name)) {
                    toolsSpan = span;
                } else if ("chat_template_kwargs".equals(name)) {
                    kwargsSpan = span;
                }
            }
        } catch (JsonProcessingException e) {
            throw new Malformed("body is not a bounded JSON document: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new Malformed("body is not readable JSON: " + e.getMessage());
        }
        if (rawMessages == null || rawMessages.isEmpty() || messageSpans == null) {
            throw new Malformed("body has no messages array");
        }
        List<Object> messages = new ArrayList<>(rawMessages.size());
        for (Object m : rawMessages) {
            if (!(m instanceof Map<?, ?> message)) {
                throw new Malformed("a message is not a JSON object");
            }
            messages.add(prepare(message));
        }
        List<Object> tools = null;
        Object rawTools = top.get("tools");
        if (rawTools instanceof List<?> list) {
            tools = new ArrayList<>(list);
        } else if (rawTools != null) {
            throw new Malformed("tools is not an array");
        }
        Map<String, Object> kwargs = new LinkedHashMap<>();
        if (top.get("chat_template_kwargs") instanceof Map<?, ?> extra) {
            for (Map.Entry<?, ?> e : extra.entrySet()) {
                String key = String.valueOf(e.getKey());
                if (!RESERVED.contains(key)) {
                    kwargs.put(key, e.getValue());
                }
            }
        }
        return new ChatPrompt(messages, tools, kwargs, new Spans(messageSpans, toolsSpan, kwargsSpan));
    }

    /** A byte offset of the body (at most 8 MiB, so an int); a parser without offsets fails the parse. */
    private static int offset(long byteOffset) throws Malformed {
        if (byteOffset < 0 || byteOffset > Integer.MAX_VALUE) {
            throw new Malformed("no byte offsets");
        }
        return (int) byteOffset;
    }

    static long span(int from, int to) {
        return ((long) from << 32) | to;
    }

    static int from(long span) {
        return (int) (span >>> 32);
    }

    static int to(long span) {
        return (int) span;
    }

    /** Where the parts that decide the render lie in the body: each message's bytes, tools', kwargs' (-1: absent). */
    record Spans(long[] messages, long tools, long kwargs) {
        static final Spans NONE = new Spans(new long[0], -1, -1);
    }

    private static final class SpanList {
        private long[] a = new long[16];
        private int n;

        void add(int from, int to) {
            if (n == a.length) {
                a = java.util.Arrays.copyOf(a, n * 2);
            }
            a[n++] = span(from, to);
        }

        long[] toArray() {
            return java.util.Arrays.copyOf(a, n);
        }
    }

    private static Map<String, Object> prepare(Map<?, ?> message) {
        Map<String, Object> copy = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : message.entrySet()) {
            copy.put(String.valueOf(e.getKey()), e.getValue());
        }
        if (copy.get("content") instanceof List<?> parts) {
            StringBuilder text = new StringBuilder();
            boolean first = true;
            for (Object part : parts) {
                if (part instanceof Map<?, ?> p && "text".equals(p.get("type")) && p.get("text") instanceof String t) {
                    if (!first) {
                        text.append('\n');
                    }
                    first = false;
                    text.append(t);
                }
            }
            copy.put("content", text.toString());
        }
        return copy;
    }
}
