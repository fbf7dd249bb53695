package dev.continuum.router.shim;

import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.DispatchRequest;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * The dispatcher's one seam to a prompt pipeline (router-kv's renders and tokenizes): for a chat request it
 * answers the prompt's {@link PromptBlocks} for the picker, or why there are none ({@link PromptFallback}). The
 * dispatcher runs the whole dispatch; a stage never sees a plan, a picker or the {@code dynamo.shim} section.
 *
 * <p>{@link #prepare} runs on the request's event loop and must not block: an answer it can give at once (the
 * model is not ready) is a {@link PromptFallback} and allocates nothing; work that must leave the loop
 * (rendering, tokenizing) is {@link Pending}. The dispatcher installs a stage only while KV routing is on.
 */
@FunctionalInterface
public interface PromptStage {
    /**
     * @param request     the request; its body is borrowed for this call only, so a stage that encodes it later
     *                    copies it first
     * @param workerModel the model as the workers' cards name it ({@code dynamo.shim.model_map} applied)
     * @param replica     the rewrite of the body the first usable shim replica receives: the prompt its worker
     *                    computes, so the one to render. Ask it only when encoding (it is not free)
     */
    Answer prepare(DispatchRequest request, String workerModel, FirstReplica replica);

    /** What {@link #prepare} answers: a fallback now, or the prompt later. */
    sealed interface Answer permits PromptFallback, Pending {
    }

    /**
     * The prompt being encoded off the event loop. The stage never completes it exceptionally (a failure is a
     * {@link PromptFallback}); it completes on the stage's own threads, where the dispatcher then picks.
     */
    record Pending(CompletionStage<PromptOutcome> prompt) implements Answer {
        public Pending {
            Objects.requireNonNull(prompt, "prompt");
        }
    }

    /** The rewrite of the body the request's first usable shim replica receives ({@link ChatRewrite#NONE} if none). */
    @FunctionalInterface
    interface FirstReplica {
        ChatRewrite rewrite(DispatchRequest request);
    }
}
