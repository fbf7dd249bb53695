package dev.continuum.router.proxy.http;

import dev.continuum.router.proxy.RelayControl;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A {@link StreamSink} over one client connection. Writes happen on the channel's event loop; at most
 * {@link #MAX_QUEUED} chunks wait for it, and none is taken while the channel is unwritable (Netty's outbound
 * buffer above its high-water mark), so what a stream can hold per connection is bounded by the water mark plus
 * a few chunks. It is the connection's {@link RelayControl} while it runs: a client close ends it.
 */
final class ChannelStreamSink implements StreamSink, RelayControl {
    static final int MAX_QUEUED = 2;

    private final Channel channel;
    /** Completes the request on the connection once the last chunk is written. */
    private final Consumer<ChannelFuture> finish;
    private final AtomicInteger queued = new AtomicInteger();
    private final List<Runnable> onEnd = new ArrayList<>(1);
    private volatile boolean open = true;

    ChannelStreamSink(Channel channel, Consumer<ChannelFuture> finish) {
        this.channel = channel;
        this.finish = finish;
    }

    @Override
    public boolean offer(byte[] chunk) {
        if (!open || !channel.isWritable()) {
            return false;
        }
        if (queued.incrementAndGet() > MAX_QUEUED) {
            queued.decrementAndGet();
            return false;
        }
        channel.eventLoop().execute(() -> {
            queued.decrementAndGet();
            if (open) {
                channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(chunk)));
            }
        });
        return true;
    }

    @Override
    public void end() {
        if (channel.eventLoop().inEventLoop()) {
            if (ended()) {
                finish.accept(channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
            }
        } else {
            channel.eventLoop().execute(this::end);
        }
    }

    @Override
    public boolean open() {
        return open;
    }

    @Override
    public void whenEnded(Runnable r) {
        if (channel.eventLoop().inEventLoop()) {
            if (open) {
                onEnd.add(r);
            } else {
                r.run();
            }
        } else {
            channel.eventLoop().execute(() -> whenEnded(r));
        }
    }

    @Override
    public void clientWritabilityChanged() {
        // Nothing waits for writability: a chunk offered while unwritable was dropped, the next one is fresh.
    }

    @Override
    public void clientClosed() {
        ended();
    }

    /** On the event loop: marks the stream ended and runs the callbacks once; false if it had ended already. */
    private boolean ended() {
        if (!open) {
            return false;
        }
        open = false;
        for (Runnable r : onEnd) {
            r.run();
        }
        onEnd.clear();
        return true;
    }
}
