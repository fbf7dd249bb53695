package dev.continuum.router.proxy.prompts;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.core.config.GlobalPromptsConfig.MergeStrategy;
import java.io.IOException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the chat path does to a chat-completion body before it goes to one backend: the {@code global_prompts}
 * prompt merged by its strategy, then, for a backend with {@code requires_single_leading_system}, every system
 * message merged into one leading system message. Equal rewrites give equal bodies, which is how the dispatch
 * hook tells whether a pool's replicas all receive the body it rendered.
 *
 * @param prompt              the prompt to merge, or null for none (an empty prompt counts as none)
 * @param strategy            how the prompt meets the request's system prompt
 * @param separator           between the two
 * @param singleLeadingSystem merge the system messages into one leading one
 */
public record ChatRewrite(@Nullable String prompt, MergeStrategy strategy, String separator,
                          boolean singleLeadingSystem) {
    /** Sends the body as it is. */
    public static final ChatRewrite NONE = new ChatRewrite(null, MergeStrategy.PREPEND, "", false);

    // Numbers are kept exactly as written (no double rounding, no Infinity from a huge exponent).
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .nodeFactory(JsonNodeFactory.withExactBigDecimals(true))
            .build();

    public ChatRewrite {
        prompt = prompt == null || prompt.isEmpty() ? null : prompt;
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(separator, "separator");
    }

    /** The rewrite for {@code model} sent to {@code backend}; {@link #NONE} (no allocation) when nothing applies. */
    public static ChatRewrite of(@Nullable GlobalPromptsConfig prompts, String model, BackendConfig backend) {
        String p = prompts == null ? null : prompts.promptFor(model, backend.name());
        boolean single = backend.requiresSingleLeadingSystem();
        if ((p == null || p.isEmpty()) && !single) {
            return NONE;
        }
        return prompts == null ? new ChatRewrite(null, MergeStrategy.PREPEND, "", true)
                : new ChatRewrite(p, prompts.mergeStrategy(), prompts.separator(), single);
    }

    /** Whether this rewrite leaves every body as it is. */
    public boolean none() {
        return prompt == null && !singleLeadingSystem;
    }

    /**
     * {@code body} (a chat-completion JSON object) rewritten, or null when it is unchanged (no rewrite applies,
     * or it has no {@code messages} array).
     *
     * @throws IOException when {@code body} is not JSON
     */
    public byte @Nullable [] apply(byte[] body) throws IOException {
        if (none()) {
            return null;
        }
        return JSON.readTree(body) instanceof ObjectNode root && applyTo(root) ? JSON.writeValueAsBytes(root) : null;
    }

    /** Applies this rewrite to {@code root} in place; true when it changed. */
    public boolean applyTo(ObjectNode root) {
        if (none() || !(root.get("messages") instanceof ArrayNode messages)) {
            return false;
        }
        boolean changed = false;
        String p = prompt;
        if (p != null) {
            SystemMessages.mergeGlobal(messages, p, strategy, separator);
            changed = true;
        }
        if (singleLeadingSystem && SystemMessages.needsSingleLeading(messages)) {
            SystemMessages.singleLeading(messages);
            changed = true;
        }
        return changed;
    }

    /** Parses a body the way {@link #apply} does (exact numbers), for a caller that edits it further. */
    public static JsonNode parse(byte[] body) throws IOException {
        return JSON.readTree(body);
    }

    /** Serializes what {@link #parse} read. */
    public static byte[] write(JsonNode root) throws IOException {
        return JSON.writeValueAsBytes(root);
    }
}
