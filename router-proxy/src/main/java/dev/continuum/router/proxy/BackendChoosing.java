package dev.continuum.router.proxy;

import dev.continuum.router.core.logging.LogSafe;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the installed {@link BackendChooser} for a standard-path request and resumes the exchange on its event
 * loop with the choice (or none), as {@link SendPlanner} does for a dispatch plan.
 */
final class BackendChoosing {
    private static final Logger log = LoggerFactory.getLogger(BackendChoosing.class);

    private BackendChoosing() {
    }

    /**
     * Starts the request's attempts with the chooser's answer; false (nothing done) when there is no chooser or the
     * route is not a chat completion, and the caller starts them itself.
     */
    static boolean ask(@Nullable BackendChooser chooser, ProxyRoute route, ParsedRequest p, List<Backend> candidates,
            ByteBuf body, EventLoop loop, Failover failover, SendPlanner.Sends sends) {
        if (chooser == null || route.kind() != ProxyRoute.Kind.CHAT || p.passthrough() || candidates.size() < 2) {
            return false;
        }
        CompletionStage<BackendChooser.@Nullable Choice> stage;
        try {
            stage = chooser.prepare(p.model(), body, candidates);
        } catch (RuntimeException e) {
            log.warn("backend chooser failed; the strategy picks: {}", LogSafe.escape(e));
            return false;
        }
        if (stage == null) {
            return false;
        }
        stage.whenComplete((choice, failure) -> {
            if (failure != null) {
                log.warn("backend chooser failed; the strategy picks: {}", LogSafe.escape(failure));
            }
            BackendChooser.Choice c = failure == null ? choice : null;
            if (loop.inEventLoop()) {
                resume(c, failover, sends);
                return;
            }
            try {
                loop.execute(() -> resume(c, failover, sends));
            } catch (RejectedExecutionException e) {
                // The loop is shutting down; the channel goes with it and the choice holds nothing.
            }
        });
        return true;
    }

    private static void resume(BackendChooser.@Nullable Choice choice, Failover failover, SendPlanner.Sends sends) {
        if (sends.wants(null)) {
            failover.choice(choice);
            sends.planned(null);
        }
    }
}
