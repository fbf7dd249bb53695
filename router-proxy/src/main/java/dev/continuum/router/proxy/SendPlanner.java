package dev.continuum.router.proxy;

import dev.continuum.router.core.logging.LogSafe;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "Plan this send": the one asynchronous step between picking where a send goes and sending it, used by the first
 * send of a request and by every later one alike. The dispatch hook answers now or {@link DispatchHook.Later};
 * either way the exchange resumes on its own event loop with the plan ({@link Sends}), so a retry behind a
 * converting ingress waits for its fresh plan just as the first send does. A plan that arrives when its send is no
 * longer wanted (the client left, the request ended, or another attempt replaced this one) ends
 * {@link DispatchPlan.Outcome#ABANDONED}. Sends that need no plan (no hook, the chat route's retries, a fallback
 * off the plan's path) never come here.
 */
final class SendPlanner {
    private static final Logger log = LoggerFactory.getLogger(SendPlanner.class);

    /** Where a planned send resumes; called on the exchange's event loop. */
    interface Sends {
        /** Whether the send is still wanted: the request goes on and {@code attempt} (null: the first send) is current. */
        boolean wants(@Nullable Attempt attempt);

        /** The first send's plan; null = standard routing. */
        void planned(@Nullable DispatchPlan plan);

        /** A later send's pin: false when the hook has none for {@code attempt}'s backend (the plan's path failed). */
        void planned(Attempt attempt, boolean pinned);
    }

    private SendPlanner() {
    }

    /** The first send: the hook sees every usable candidate. */
    static void first(DispatchHook hook, ParsedRequest p, List<Backend> candidates, ByteBuf body,
            PlanGuard.HookContext context, EventLoop loop, Sends sends) {
        DispatchHook.Answer answer = PlanGuard.ask(hook, p, candidates, body, context);
        if (answer instanceof DispatchHook.Later later) {
            await(later, loop, sends, null, null);
        } else {
            sends.planned((DispatchPlan) answer);
        }
    }

    /** A later send on the plan's path behind a converting ingress: a fresh plan narrowed to {@code a}'s backend. */
    static void again(DispatchHook hook, PlanGuard g, ParsedRequest p, Attempt a, ByteBuf body,
            PlanGuard.HookContext context, EventLoop loop, Sends sends) {
        DispatchHook.Answer answer = PlanGuard.askAgain(hook, p, a.backend, body, context);
        if (answer instanceof DispatchHook.Later later) {
            await(later, loop, sends, g, a);
        } else {
            sends.planned(a, g.adopt((DispatchPlan) answer, a.backend));
        }
    }

    /** Resumes on {@code loop} once the plan is made; {@code a} null = the first send. */
    private static void await(DispatchHook.Later later, EventLoop loop, Sends sends, @Nullable PlanGuard g,
            @Nullable Attempt a) {
        later.plan().whenComplete((plan, failure) -> {
            if (failure != null) {
                log.warn("dispatch hook failed; the send takes {}: {}", a == null ? "standard routing" : "no plan",
                        LogSafe.escape(failure));
            }
            DispatchPlan pl = failure == null ? plan : null;
            try {
                loop.execute(() -> resume(pl, sends, g, a));
            } catch (RejectedExecutionException e) {
                PlanGuard.abandoned(pl); // the loop is shutting down; the channel goes with it
            }
        });
    }

    private static void resume(@Nullable DispatchPlan pl, Sends sends, @Nullable PlanGuard g, @Nullable Attempt a) {
        if (!sends.wants(a)) {
            PlanGuard.abandoned(pl);
        } else if (g == null || a == null) {
            sends.planned(pl);
        } else {
            sends.planned(a, g.adopt(pl, a.backend));
        }
    }
}
