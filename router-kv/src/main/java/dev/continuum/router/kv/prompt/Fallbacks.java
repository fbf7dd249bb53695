package dev.continuum.router.kv.prompt;

import dev.continuum.router.kv.prompt.PromptEncoding.Fallback;
import dev.continuum.router.kv.prompt.PromptEncoding.Reason;

/** The three fallback results, allocated once (a fallback carries nothing but its reason). */
final class Fallbacks {
    static final Fallback TOKENIZER_UNAVAILABLE = new Fallback(Reason.TOKENIZER_UNAVAILABLE);
    static final Fallback PROMPT_TOO_LARGE = new Fallback(Reason.PROMPT_TOO_LARGE);
    static final Fallback RENDER_UNAVAILABLE = new Fallback(Reason.RENDER_UNAVAILABLE);

    private Fallbacks() {
    }

    static Fallback of(Reason reason) {
        return switch (reason) {
            case TOKENIZER_UNAVAILABLE -> TOKENIZER_UNAVAILABLE;
            case PROMPT_TOO_LARGE -> PROMPT_TOO_LARGE;
            case RENDER_UNAVAILABLE -> RENDER_UNAVAILABLE;
        };
    }
}
