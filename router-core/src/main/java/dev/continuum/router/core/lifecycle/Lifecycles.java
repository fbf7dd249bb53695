package dev.continuum.router.core.lifecycle;

import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Adapters that give a plain resource a {@link Lifecycle}, so that it joins a {@link LifecycleStack}
 * and is released on the stack's one teardown path instead of in a hand-written finally block.
 */
public final class Lifecycles {
    private Lifecycles() {
    }

    /**
     * A component whose start calls {@code open} and whose stop closes what it returned (a
     * subscription, a meter binder, a registry). A failing {@code open} fails the start.
     */
    public static Lifecycle opening(String name, Callable<? extends AutoCloseable> open) {
        return new Opening(name, open);
    }

    private static final class Opening extends StartStopSupport {
        private final String name;
        private final Callable<? extends AutoCloseable> open;
        private volatile @Nullable AutoCloseable resource;

        Opening(String name, Callable<? extends AutoCloseable> open) {
            this.name = Objects.requireNonNull(name, "name");
            this.open = Objects.requireNonNull(open, "open");
        }

        @Override
        protected CompletableFuture<Void> doStart() throws Exception {
            resource = open.call();
            return CompletableFuture.completedFuture(null);
        }

        @Override
        protected CompletableFuture<Void> doStop() throws Exception {
            AutoCloseable r = resource;
            resource = null;
            if (r != null) {
                r.close();
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        protected String lifecycleName() {
            return name;
        }
    }
}
