package dev.continuum.router.kv.prompt;

/**
 * A render that cannot give the prompt: the template raised, used a feature we refuse, or ran past a bound.
 * Thrown inside the template engine, caught at the edge of one render and turned into a
 * {@link PromptEncoding.Fallback}; it never carries a stack trace (hostile templates can throw it often).
 */
class TemplateFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TemplateFailure(String message) {
        super(message, null, false, false);
    }

    /** What the failure falls back with. */
    PromptEncoding.Reason reason() {
        return PromptEncoding.Reason.RENDER_UNAVAILABLE;
    }

    /** Rendered text (or a string the template built) past the size bound. */
    static final class TooLarge extends TemplateFailure {
        private static final long serialVersionUID = 1L;

        TooLarge(String message) {
            super(message);
        }

        @Override
        PromptEncoding.Reason reason() {
            return PromptEncoding.Reason.PROMPT_TOO_LARGE;
        }
    }
}
