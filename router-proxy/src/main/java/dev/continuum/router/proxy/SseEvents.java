package dev.continuum.router.proxy;

import dev.continuum.router.proxy.metrics.StreamAbort;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Splits a {@code text/event-stream} body, chunk by chunk, into events and hands each event's data (its
 * {@code data:} lines, one optional space after the colon dropped, joined by {@code \n}) to a sink; other
 * fields ({@code event:}, {@code id:}, comments) are dropped. A line may span chunks; at most
 * {@link IngressConverter#MAX_EVENT_BYTES} of an unfinished event are held. Owns its buffers until
 * {@link #close()}.
 *
 * <p>Per streamed token this runs once, so the usual case costs no copy: a chunk that starts with nothing held is
 * scanned where it lies, and an event of one data line that ends in the chunk it arrived in is handed over as that
 * line's bytes (the buffer's indices moved to it for the call). Only a line cut by a chunk boundary is kept (a
 * slice, no copy), and only an event of several data lines, or one that spans chunks, is copied together.
 */
final class SseEvents {
    /** Receives one event's data (borrowed for the call; its indices must be left as they are). */
    interface Sink {
        void event(ByteBuf data) throws IngressConverter.InvalidResponse;
    }

    /** The unfinished line the last chunk ended with. */
    private final CompositeByteBuf pending;
    /** The event's data when it cannot be a view: several data lines, or one that outlived its chunk. */
    private final ByteBuf data;
    private boolean hasData;
    /** The event's single data line in the buffer being scanned, or -1 when it is in {@link #data}. */
    private int viewFrom = -1;
    private int viewLength;

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
        ByteBuf buf = chunk;
        if (pending.isReadable()) {
            pending.addComponent(true, chunk.readRetainedSlice(chunk.readableBytes()));
            buf = pending;
        }
        int eol;
        while ((eol = buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) '\n')) >= 0) {
            int start = buf.readerIndex();
            int end = eol > start && buf.getByte(eol - 1) == '\r' ? eol - 1 : eol;
            buf.readerIndex(eol + 1);
            line(buf, start, end - start, sink);
        }
        keepView(buf); // the event goes on in the next chunk: its line is copied before the buffer moves on
        if (buf == chunk) {
            if (chunk.isReadable()) {
                pending.addComponent(true, chunk.readRetainedSlice(chunk.readableBytes()));
            }
        } else {
            pending.discardReadComponents();
        }
        if ((long) pending.readableBytes() + data.readableBytes() > IngressConverter.MAX_EVENT_BYTES) {
            throw new IngressConverter.InvalidResponse("an event of the upstream's stream is too large",
                    StreamAbort.OVERSIZED_EVENT);
        }
    }

    /** The stream ended: an event the upstream did not terminate with a blank line still counts. */
    void finish(Sink sink) throws IngressConverter.InvalidResponse {
        if (pending.isReadable()) {
            int from = pending.readerIndex();
            int length = pending.readableBytes();
            pending.skipBytes(length);
            line(pending, from, length, sink);
        }
        dispatch(pending, sink);
    }

    private void line(ByteBuf buf, int from, int length, Sink sink) throws IngressConverter.InvalidResponse {
        if (length == 0) {
            dispatch(buf, sink);
            return;
        }
        if (length >= 5 && buf.getByte(from) == 'd' && buf.getByte(from + 1) == 'a'
                && buf.getByte(from + 2) == 't' && buf.getByte(from + 3) == 'a'
                && buf.getByte(from + 4) == ':') {
            int value = from + 5;
            if (value < from + length && buf.getByte(value) == ' ') {
                value++;
            }
            int valueLength = from + length - value;
            if (!hasData) {
                hasData = true;
                viewFrom = value;
                viewLength = valueLength;
            } else {
                keepView(buf);
                data.writeByte('\n');
                data.writeBytes(buf, value, valueLength);
            }
            if ((hasData && viewFrom >= 0 ? viewLength : data.readableBytes()) > IngressConverter.MAX_EVENT_BYTES) {
                throw new IngressConverter.InvalidResponse("an event of the upstream's stream is too large",
                    StreamAbort.OVERSIZED_EVENT);
            }
        }
    }

    /** Copies the event's data line out of {@code buf} when it is still a view of it. */
    private void keepView(ByteBuf buf) {
        if (viewFrom >= 0) {
            data.writeBytes(buf, viewFrom, viewLength);
            viewFrom = -1;
        }
    }

    private void dispatch(ByteBuf buf, Sink sink) throws IngressConverter.InvalidResponse {
        if (!hasData) {
            return;
        }
        hasData = false;
        if (viewFrom >= 0) {
            int reader = buf.readerIndex();
            int writer = buf.writerIndex();
            buf.setIndex(viewFrom, viewFrom + viewLength);
            viewFrom = -1;
            try {
                sink.event(buf);
            } finally {
                buf.setIndex(reader, writer);
            }
            return;
        }
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
