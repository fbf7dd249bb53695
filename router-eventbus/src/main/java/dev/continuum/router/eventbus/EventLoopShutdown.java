package dev.continuum.router.eventbus;

import io.netty.channel.EventLoopGroup;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** The one way this module's components stop their own event loops: no quiet period, at most one second. */
public final class EventLoopShutdown {
    private EventLoopShutdown() {
    }

    /** Completes once {@code group} has terminated, or at once when there is none. */
    public static CompletableFuture<Void> of(@Nullable EventLoopGroup group) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (group == null) {
            done.complete(null);
        } else {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).addListener(f -> done.complete(null));
        }
        return done;
    }
}
