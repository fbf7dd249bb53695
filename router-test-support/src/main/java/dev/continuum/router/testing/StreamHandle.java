package dev.continuum.router.testing;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The upstream side of one SSE response of {@link TestUpstream}: the test decides when each event
 * goes out, so it can prove an event reached the client before the next one was even sent. Every
 * send waits until the bytes were handed to the socket.
 */
public final class StreamHandle {
    private final Channel channel;
    private final RecordedRequest request;
    private final AtomicLong bytesSent = new AtomicLong();
    private final CountDownLatch closed = new CountDownLatch(1);

    StreamHandle(Channel channel, RecordedRequest request) {
        this.channel = channel;
        this.request = request;
        channel.closeFuture().addListener(f -> closed.countDown());
    }

    public RecordedRequest request() {
        return request;
    }

    /** Sends {@code data: <data>\n\n}. */
    public void send(String data) {
        sendRaw("data: " + data + "\n\n");
    }

    /** Sends raw bytes as one chunk. */
    public void sendRaw(String raw) {
        byte[] bytes = raw.getBytes(StandardCharsets.UTF_8);
        await(channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(bytes))));
        bytesSent.addAndGet(bytes.length);
    }

    /** Sends {@code data: [DONE]} and ends the response cleanly. */
    public void finish() {
        send("[DONE]");
        await(channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT));
    }

    /** Closes the connection mid-stream: the response never ends. */
    public void abort() {
        channel.close().syncUninterruptibly();
    }

    /** False while the peer (the router) does not read fast enough. */
    public boolean isWritable() {
        return channel.isWritable();
    }

    public boolean isOpen() {
        return channel.isActive();
    }

    /** True once the connection closed (either side), waiting up to {@code millis}. */
    public boolean awaitClosed(long millis) throws InterruptedException {
        return closed.await(millis, TimeUnit.MILLISECONDS);
    }

    public long bytesSent() {
        return bytesSent.get();
    }

    void addSent(long n) {
        bytesSent.addAndGet(n);
    }

    private static void await(ChannelFuture f) {
        f.awaitUninterruptibly(10, TimeUnit.SECONDS);
        if (!f.isSuccess()) {
            throw new IllegalStateException("write failed", f.cause());
        }
    }
}
