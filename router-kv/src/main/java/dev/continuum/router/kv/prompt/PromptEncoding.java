package dev.continuum.router.kv.prompt;

import dev.continuum.router.kv.hash.PromptPrefix;
import org.jspecify.annotations.Nullable;

/** What encoding one request's prompt gave: its token IDs, or why the request scores without a KV term. */
public sealed interface PromptEncoding {

    /**
     * The rendered prompt's token IDs, in order; the array is owned by the receiver.
     *
     * @param prefix what is known of its leading tokens (a conversation prefix seen before, or to be reused
     *               later), for the block hashes; null when nothing is
     */
    record Tokens(int[] ids, @Nullable PromptPrefix prefix) implements PromptEncoding {
        public Tokens(int[] ids) {
            this(ids, null);
        }
    }

    /** No token IDs; the request falls back to load-based selection, counted under {@code reason}. */
    record Fallback(Reason reason) implements PromptEncoding {
    }

    /** The fallback results, as {@code continuum_dynamo_kv_selection_total{result}} names them. */
    enum Reason {
        /** No tokenizer loaded (yet) for the model, or it failed to load. */
        TOKENIZER_UNAVAILABLE("tokenizer_unavailable"),
        /** The body, the rendered text or the token count exceeds its bound. */
        PROMPT_TOO_LARGE("prompt_too_large"),
        /** The template failed, ran out of its budget or deadline, or no render permit was free in time. */
        RENDER_UNAVAILABLE("render_unavailable");

        private final String label;

        Reason(String label) {
            this.label = label;
        }

        public String label() {
            return label;
        }
    }
}
