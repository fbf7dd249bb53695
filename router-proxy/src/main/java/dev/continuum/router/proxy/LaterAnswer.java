package dev.continuum.router.proxy;

import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/** A response computed off the exchange's loop (a local route's answer), handed back on that loop. */
final class LaterAnswer {
    private LaterAnswer() {
    }

    /**
     * Calls {@code answer} on {@code loop} with {@code later}'s response, or a 500 when it failed; the receiver
     * owns the response (a late one is released there). Released here when the loop is already shut down.
     */
    static void onLoop(EventLoop loop, CompletionStage<FullHttpResponse> later, Consumer<FullHttpResponse> answer) {
        later.whenComplete((r, failure) -> {
            FullHttpResponse res = r != null && failure == null ? r
                    : OpenAiErrors.error(500, OpenAiErrors.SERVER, "internal_error", "The router could not answer.");
            if (loop.inEventLoop()) {
                answer.accept(res);
                return;
            }
            try {
                loop.execute(() -> answer.accept(res));
            } catch (RejectedExecutionException e) {
                res.release(); // the loop is shutting down; the channel goes with it
            }
        });
    }
}
