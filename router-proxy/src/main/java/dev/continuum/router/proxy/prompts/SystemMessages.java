package dev.continuum.router.proxy.prompts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.config.GlobalPromptsConfig.MergeStrategy;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The two edits of a chat body's {@code messages} array, in place. Pure: no I/O, no state. A message's
 * {@code content} is a string or an array of parts; text parts are {@code {"type": "text", "text": ...}}.
 */
final class SystemMessages {
    private static final String SYSTEM = "system";

    private SystemMessages() {
    }

    /**
     * Merges {@code prompt} into the system prompt. {@code PREPEND}/{@code APPEND}: into the first system
     * message (its text becomes prompt, separator, text, or the reverse), or a new leading system message when
     * there is none; {@code REPLACE}: every system message is dropped and the prompt leads alone.
     */
    static void mergeGlobal(ArrayNode messages, String prompt, MergeStrategy strategy, String separator) {
        if (strategy == MergeStrategy.REPLACE) {
            removeSystem(messages);
            messages.insert(0, system(messages, prompt));
            return;
        }
        int at = firstSystem(messages);
        if (at < 0) {
            messages.insert(0, system(messages, prompt));
            return;
        }
        ObjectNode m = (ObjectNode) messages.get(at);
        boolean prepend = strategy == MergeStrategy.PREPEND;
        JsonNode content = m.get("content");
        if (content instanceof ArrayNode parts) {
            mergeIntoParts(parts, prompt, prepend, separator);
        } else if (content != null && content.isTextual() && !content.textValue().isEmpty()) {
            String own = content.textValue();
            m.put("content", prepend ? prompt + separator + own : own + separator + prompt);
        } else {
            m.put("content", prompt);
        }
    }

    /** A part list: the prompt joins the first (or last) text part, or becomes a text part of its own there. */
    private static void mergeIntoParts(ArrayNode parts, String prompt, boolean prepend, String separator) {
        int edge = prepend ? 0 : parts.size() - 1;
        JsonNode p = parts.isEmpty() ? null : parts.get(edge);
        if (p instanceof ObjectNode part && isTextPart(part)) {
            String own = part.get("text").textValue();
            part.put("text", prepend ? prompt + separator + own : own + separator + prompt);
            return;
        }
        ObjectNode text = parts.objectNode().put("type", "text").put("text", prompt);
        if (prepend) {
            parts.insert(0, text);
        } else {
            parts.add(text);
        }
    }

    /**
     * Whether the body needs {@link #singleLeading}: more than one system message, or one that does not lead.
     */
    static boolean needsSingleLeading(ArrayNode messages) {
        int count = 0;
        for (int i = 0; i < messages.size(); i++) {
            if (isSystem(messages.get(i))) {
                if (i > 0 || ++count > 1) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Every system message's text, in order and joined by a blank line, as one leading system message (text parts
     * of a part list joined by newlines, as the worker's frontend joins them; other parts of system messages are
     * dropped).
     */
    static void singleLeading(ArrayNode messages) {
        List<String> texts = new ArrayList<>();
        for (JsonNode m : messages) {
            if (isSystem(m)) {
                String t = text(m.get("content"));
                if (t != null && !t.isEmpty()) {
                    texts.add(t);
                }
            }
        }
        removeSystem(messages);
        messages.insert(0, system(messages, String.join("\n\n", texts)));
    }

    private static @Nullable String text(@Nullable JsonNode content) {
        if (content == null) {
            return null;
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        if (content instanceof ArrayNode parts) {
            List<String> texts = new ArrayList<>(parts.size());
            for (JsonNode p : parts) {
                if (p instanceof ObjectNode part && isTextPart(part)) {
                    texts.add(part.get("text").textValue());
                }
            }
            return String.join("\n", texts);
        }
        return null;
    }

    private static boolean isTextPart(ObjectNode part) {
        JsonNode text = part.get("text");
        return "text".equals(part.path("type").textValue()) && text != null && text.isTextual();
    }

    private static int firstSystem(ArrayNode messages) {
        for (int i = 0; i < messages.size(); i++) {
            if (isSystem(messages.get(i))) {
                return i;
            }
        }
        return -1;
    }

    private static void removeSystem(ArrayNode messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (isSystem(messages.get(i))) {
                messages.remove(i);
            }
        }
    }

    private static boolean isSystem(JsonNode m) {
        return m instanceof ObjectNode && SYSTEM.equals(m.path("role").textValue());
    }

    private static ObjectNode system(ArrayNode messages, String text) {
        return messages.objectNode().put("role", SYSTEM).put("content", text);
    }
}
