package dev.continuum.router.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.util.ReferenceCountUtil;

/**
 * An upstream answer held before anything is decided or written: its head and at most {@code cap} bytes of
 * its body. Owns both until {@link #release()}.
 */
final class HeldAnswer {
    final HttpResponse head;
    final CompositeByteBuf body;
    private final int cap;

    /** Takes over {@code head}. */
    HeldAnswer(HttpResponse head, ByteBufAllocator alloc, int cap) {
        this.head = head;
        this.body = alloc.compositeBuffer();
        this.cap = cap;
    }

    /**
     * Adds what of {@code c} (released here) fits under the cap. False when some of it did not fit: the
     * body holds only the answer's first {@code cap} bytes.
     */
    boolean add(HttpContent c) {
        ByteBuf in = c.content();
        int room = cap - body.readableBytes();
        boolean fits = in.readableBytes() <= room;
        if (room > 0 && in.isReadable()) {
            body.addComponent(true, in.readRetainedSlice(Math.min(room, in.readableBytes())));
        }
        c.release();
        return fits;
    }

    void release() {
        body.release();
        ReferenceCountUtil.release(head);
    }
}
