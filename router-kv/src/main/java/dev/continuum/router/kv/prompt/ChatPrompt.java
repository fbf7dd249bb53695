package dev.continuum.router.kv.prompt;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
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
 * which may not replace the variables transformers itself passes.
 */
record ChatPrompt(List<Object> messages, @Nullable List<Object> tools, Map<String, Object> kwargs) {
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
        Object root;
        try (JsonParser parser = mapper.createParser(body)) {
            root = mapper.readValue(parser, Object.class);
        } catch (JsonProcessingException e) {
            throw new Malformed("body is not a bounded JSON document: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new Malformed("body is not readable JSON: " + e.getMessage());
        }
        if (!(root instanceof Map<?, ?> top)) {
            throw new Malformed("body is not a JSON object");
        }
        if (!(top.get("messages") instanceof List<?> rawMessages) || rawMessages.isEmpty()) {
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
        return new ChatPrompt(messages, tools, kwargs);
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
