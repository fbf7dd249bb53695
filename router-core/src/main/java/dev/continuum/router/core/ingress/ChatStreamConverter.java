package dev.continuum.router.core.ingress;

import dev.continuum.router.core.proxy.IngressConverter;
import dev.continuum.router.core.proxy.IngressConverter.InvalidResponse;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.Arrays;

/**
 * What both stream converters share: an upstream chat-completion stream read chunk by chunk ({@link ChatChunk}),
 * {@code [DONE]} or the upstream's end finishing the client's stream once, an {@code {"error": ...}} event ending
 * it with the wire's error event, a converter that fails releasing what it wrote, and the slot (block or item
 * index) of each tool call, at most {@link #MAX_TOOL_CALLS} of them. Subclasses write the wire's events.
 */
public abstract class ChatStreamConverter implements IngressConverter.StreamConverter {
    /** The most tool calls of one answer; a higher index cuts the stream. */
    public static final int MAX_TOOL_CALLS = 128;
    /** No slot: a tool call not seen yet, or nothing open. */
    protected static final int NONE = -1;
    private static final int OUT_BYTES = 256;

    private boolean done;
    /** Slot per chat tool-call index ({@link #NONE} = not seen). */
    private int[] toolSlots = new int[0];

    @Override
    public final ByteBuf event(ByteBuf data, ByteBufAllocator alloc) throws InvalidResponse {
        ByteBuf out = alloc.buffer(OUT_BYTES);
        try {
            if (done) {
                return out;
            }
            if (isDoneMarker(data)) {
                done = true;
                finish(out);
                return out;
            }
            ChatChunk chunk = ChatChunk.read(data, !started());
            if (chunk.error()) {
                // An error after the 200 head (the pin refused mid-stream, say): relayed as the stream's end.
                done = true;
                error(UpstreamError.of(500, data), out);
                return out;
            }
            chunk(chunk, out);
            return out;
        } catch (InvalidResponse | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    @Override
    public final ByteBuf end(ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(OUT_BYTES);
        if (!done) {
            done = true;
            finish(out); // an upstream that ended without [DONE]: still a complete answer for the client
        }
        return out;
    }

    private static boolean isDoneMarker(ByteBuf data) {
        int i = data.readerIndex();
        return data.readableBytes() == 6 && data.getByte(i) == '[' && data.getByte(i + 1) == 'D'
                && data.getByte(i + 2) == 'O' && data.getByte(i + 3) == 'N' && data.getByte(i + 4) == 'E'
                && data.getByte(i + 5) == ']';
    }

    /** Whether the client's stream has started (until then chunks are read with their id, model and time). */
    protected abstract boolean started();

    /** Writes the events for one chunk. */
    protected abstract void chunk(ChatChunk chunk, ByteBuf out) throws InvalidResponse;

    /** Writes the wire's error event for an error the upstream sent inside the stream; the stream ends. */
    protected abstract void error(UpstreamError error, ByteBuf out);

    /** Writes the events that end the client's stream; called once. */
    protected abstract void finish(ByteBuf out);

    /**
     * The slot of chat tool call {@code tool}, or {@link #NONE} when it is new.
     *
     * @throws InvalidResponse when the index is out of range
     */
    protected final int toolSlot(int tool) throws InvalidResponse {
        if (tool < 0 || tool >= MAX_TOOL_CALLS) {
            throw new InvalidResponse("tool call index out of range");
        }
        return tool < toolSlots.length ? toolSlots[tool] : NONE;
    }

    /** Records the slot of chat tool call {@code tool} (an index {@link #toolSlot} accepted). */
    protected final void toolSlot(int tool, int slot) {
        if (tool >= toolSlots.length) {
            int old = toolSlots.length;
            toolSlots = Arrays.copyOf(toolSlots, Math.min(MAX_TOOL_CALLS, Math.max(4, tool + 1) * 2));
            Arrays.fill(toolSlots, old, toolSlots.length, NONE);
        }
        toolSlots[tool] = slot;
    }
}
