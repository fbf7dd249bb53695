package dev.continuum.router.kv.prompt;

import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * One render's execution budget, checked by the template engine before it evaluates each node (text,
 * expression or tag, loop bodies and macro bodies included): a count of nodes standing in for an instruction
 * budget, the bytes the render thread has allocated (so a template cannot fill the heap with strings it builds
 * and keeps, each one under the string cap), the request's deadline, and the thread's interrupt flag. Jinja has no unbounded loop of its own, so a
 * template that never ends does so by evaluating nodes, and every one of them passes here.
 *
 * <p>The render thread installs its budget in a thread-local for the duration of one render; the engine's
 * node hook finds it there without allocating.
 */
final class RenderBudget {
    private static final ThreadLocal<@Nullable RenderBudget> CURRENT = new ThreadLocal<>();
    /**
     * Read the clock and the allocation counter every this many nodes: cheap, and between two reads at most
     * this many strings of the size cap can be built.
     */
    private static final int CHECK_EVERY = 16;
    private static final com.sun.management.@Nullable ThreadMXBean THREADS = threads();

    private final long maxNodes;
    private final long maxAllocatedBytes;
    private final long allocatedAtStart;
    private final long deadlineNanos;
    private final LongSupplier nanoTime;
    private long nodes;
    private @Nullable TemplateFailure failure;

    RenderBudget(long maxNodes, long maxAllocatedBytes, long deadlineNanos, LongSupplier nanoTime) {
        this.maxNodes = maxNodes;
        this.maxAllocatedBytes = maxAllocatedBytes;
        this.allocatedAtStart = allocated();
        this.deadlineNanos = deadlineNanos;
        this.nanoTime = nanoTime;
    }

    /** Runs {@code render} with this budget installed on the current thread. */
    <T> T run(Supplier<T> render) {
        RenderBudget previous = CURRENT.get();
        CURRENT.set(this);
        try {
            return render.get();
        } finally {
            CURRENT.set(previous);
        }
    }

    /** The engine's per-node hook: charges one node to the current thread's budget, if any. */
    static void chargeCurrent() {
        RenderBudget budget = CURRENT.get();
        if (budget != null) {
            budget.charge();
        }
    }

    void charge() {
        if (failure != null) {
            throw failure;
        }
        long n = ++nodes;
        if (n > maxNodes) {
            throw fail(new TemplateFailure("render budget of " + maxNodes + " template nodes exhausted"));
        }
        if (Thread.currentThread().isInterrupted()) {
            throw fail(new TemplateFailure("render interrupted"));
        }
        if (n % CHECK_EVERY == 0) {
            if (nanoTime.getAsLong() - deadlineNanos >= 0) {
                throw fail(new TemplateFailure("render deadline passed"));
            }
            if (allocated() - allocatedAtStart > maxAllocatedBytes) {
                throw fail(new TemplateFailure("render allocated more than " + maxAllocatedBytes + " bytes"));
            }
        }
    }

    /** Bytes the current thread has allocated so far; 0 where the JVM cannot tell (then only the caps bound it). */
    private static long allocated() {
        com.sun.management.ThreadMXBean threads = THREADS;
        return threads == null ? 0 : threads.getCurrentThreadAllocatedBytes();
    }

    private static com.sun.management.@Nullable ThreadMXBean threads() {
        if (java.lang.management.ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported()) {
            if (!t.isThreadAllocatedMemoryEnabled()) {
                t.setThreadAllocatedMemoryEnabled(true);
            }
            return t;
        }
        return null;
    }

    /**
     * Records a failure that ends the render. jinjava turns many exceptions raised inside a template into
     * collected errors and carries on; a recorded failure makes every later node throw again and is rethrown
     * when the render returns, so neither {@code raise_exception} nor an exhausted bound can be swallowed.
     */
    TemplateFailure fail(TemplateFailure f) {
        if (failure == null) {
            failure = f;
        }
        return f;
    }

    /** Records {@code f} on the current thread's budget (if any) and returns it for throwing. */
    static TemplateFailure failCurrent(TemplateFailure f) {
        RenderBudget budget = CURRENT.get();
        return budget == null ? f : budget.fail(f);
    }

    void rethrowFailure() {
        if (failure != null) {
            throw failure;
        }
    }

    long nodes() {
        return nodes;
    }
}
