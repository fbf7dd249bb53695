package dev.continuum.router.core.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Splits a {@code text/event-stream} body, chunk by chunk, into events and hands each event's data (its
 * {@code data:} lines, one optional space after the colon dropped, joined by {@code \n}) to a sink; other
 * fields ({@code event:}, {@code id:}, comments) are dropped. A line may span chunks; at most
 * {@link IngressConverter#MAX_EVENT_BYTES} of an unfinished event are held. Owns its buffers until
 * {@link #close()}.
 */
final class SseEvents {
    /** Receives one event's data (borrowed for the call). */
    interface Sink {
        void event(ByteBuf data) throws IngressConverter.InvalidResponse;
    }

    private final CompositeByteBuf pending;
    private final ByteBuf data;
    private boolean hasData;

    SseEvents(ByteBufAllocator alloc) {
        pending = alloc.compositeBuffer();
        data = alloc.buffer();
    }

    /**
     * Adds one chunk (borrowed; its readable bytes are consumed) and hands out every event it completes.
     *
     * @throws IngressConverter.InvalidResponse when an event outgrows the bound, or the sink refuses one
     */
    void feed(ByteBuf chunk, Sink sink) throws IngressConverter.InvalidResponse {
        if (chunk.isReadable()) {
            pending.addComponent(true, chunk.readRetainedSlice(chunk.readableBytes()));
        }
        int eol;
        while ((eol = pending.indexOf(pending.readerIndex(), pending.writerIndex(), (byte) '\n')) >= 0) {
            int start = pending.readerIndex();
            int end = eol > start && pending.getByte(eol - 1) == '\r' ? eol - 1 : eol;
            line(start, end - start, sink);
            pending.readerIndex(eol + 1);
        }
        pending.discardReadComponents();
        if ((long) pending.readableBytes() + data.readableBytes() > IngressConverter.MAX_EVENT_BYTES) {
            throw new IngressConverter.InvalidResponse("an event of the upstream's stream is too large");
        }
    }

    /** The stream ended: an event the upstream did not terminate with a blank line still counts. */
    void finish(Sink sink) throws IngressConverter.InvalidResponse {
        if (pending.isReadable()) {
            line(pending.readerIndex(), pending.readableBytes(), sink);
            pending.skipBytes(pending.readableBytes());
        }
        dispatch(sink);
    }

    private void line(int from, int length, Sink sink) throws IngressConverter.InvalidResponse {
        if (length == 0) {
            dispatch(sink);
            return;
        }
        if (length >= 5 && pending.getByte(from) == 'd' && pending.getByte(from + 1) == 'a'
                && pending.getByte(from + 2) == 't' && pending.getByte(from + 3) == 'a'
                && pending.getByte(from + 4) == ':') {
            int value = from + 5;
            if (value < from + length && pending.getByte(value) == ' ') {
                value++;
            }
            if (hasData) {
                data.writeByte('\n');
            }
            data.writeBytes(pending, value, from + length - value);
            hasData = true;
            if (data.readableBytes() > IngressConverter.MAX_EVENT_BYTES) {
                throw new IngressConverter.InvalidResponse("an event of the upstream's stream is too large");
            }
        }
    }

    private void dispatch(Sink sink) throws IngressConverter.InvalidResponse {
        if (!hasData) {
            return;
        }
        hasData = false;
        try {
            sink.event(data);
        } finally {
            data.clear();
        }
    }

    void close() {
        pending.release();
        data.release();
    }
}
