package dev.continuum.router.kv.backend;

import dev.continuum.router.eventbus.EventBus;
import dev.continuum.router.eventbus.StreamBytesHandler;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * {@code transport: event_bus}: the least-loaded live, non-draining kv-listener session granted the backend relays
 * its stream ({@link EventBus#openAnnouncedStream}). A session that drains has its streams unsubscribed by the
 * router at once, so the source reopens on another session.
 */
public final class BusKvStreamOpener implements KvStreamOpener {
    private final EventBus bus;

    public BusKvStreamOpener(EventBus bus) {
        this.bus = bus;
    }

    @Override
    public CompletableFuture<Opened> open(String backend, @Nullable Long lastEventId, ChannelHandler consumer) {
        CompletableFuture<Opened> result = new CompletableFuture<>();
        // Runs on the stream's event loop as the stream is handed over, before any of its frames is read.
        bus.openAnnouncedStream(backend, lastEventId).whenComplete((stream, error) -> {
            if (error != null) {
                result.completeExceptionally(error);
                return;
            }
            Channel ch = stream.channel();
            ch.closeFuture().addListener(f -> stream.close());
            ch.pipeline().addLast("bus-bytes", new StreamBytesHandler(StreamBytesHandler.CLOSE_TIMEOUT));
            ch.pipeline().addLast("sse", consumer);
            result.complete(new Opened(ch, () -> {
                stream.close();
                ch.close();
            }, stream::carrierLost, new Carrier(stream.brokerId(), stream.command().session().clientId())));
        });
        return result;
    }
}
