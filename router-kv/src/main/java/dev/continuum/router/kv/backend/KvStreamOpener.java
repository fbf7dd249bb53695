package dev.continuum.router.kv.backend;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * How a {@code kv_cache_index} source reaches its backend's SSE KV-event stream: directly or through a
 * kv-listener on the event bus. Either way {@code consumer} receives the SSE body as {@link io.netty.buffer.ByteBuf}s
 * and the channel closes when the stream ends.
 */
public interface KvStreamOpener {
    /** Opens the stream, resuming after {@code lastEventId} (from the start when null). */
    public CompletableFuture<Opened> open(String backend, @Nullable Long lastEventId, ChannelHandler consumer);

    /**
     * An open stream.
     *
     * @param channel     the channel carrying it; its close future is the stream's end
     * @param close       ends it from the router's side (a bus stream also unsubscribes)
     * @param carrierLost whether its end came from the carrier (a kv-listener session that ended or drains)
     * @param carrier     the kv-listener session relaying it; null for a direct stream
     */
    public record Opened(Channel channel, Runnable close, java.util.function.BooleanSupplier carrierLost,
                  @Nullable Carrier carrier) {
    }

    /**
     * The kv-listener session that relays a stream, by configured names only (safe to show).
     *
     * @param kvListener its {@code dynamo.event_bus.brokers[].id}
     * @param clientId   its {@code client_id}
     */
    public record Carrier(String kvListener, String clientId) {
    }
}
