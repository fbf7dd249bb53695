package dev.continuum.router.proxy.ingress;

import dev.continuum.router.proxy.metrics.StreamAbort;
import dev.continuum.router.proxy.IngressConverter;
import dev.continuum.router.proxy.IngressConverter.InvalidResponse;
import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What both stream converters share: an upstream chat-completion stream read chunk by chunk ({@link ChatChunk}),
 * {@code [DONE]} or the upstream's end finishing the client's stream once, an {@code {"error": ...}} event ending
 * it with the wire's error event, each chunk taken apart in the same
 * order (start, text, tool-call fragments, finish reason and usage kept), and the slot (block or item index) of each
 * tool call, at most {@link #MAX_TOOL_CALLS} of them. A stream the upstream fails after the head went out ends
 * once with the wire's error ending ({@link #fail}). Subclasses write the wire's events.
 */
public abstract class ChatStreamConverter implements IngressConverter.StreamConverter {
    /** The most tool calls of one answer; a higher index cuts the stream. */
    public static final int MAX_TOOL_CALLS = 128;
    /** No slot: a tool call not seen yet, or nothing open. */
    protected static final int NONE = -1;

    private boolean started;
    private boolean done;
    /** Slot per chat tool-call index ({@link #NONE} = not seen). */
    private int[] toolSlots = new int[0];

    @Override
    public final void event(ByteBuf data, ByteBuf out) throws InvalidResponse {
        if (done) {
            return;
        }
        if (isDoneMarker(data)) {
            endStream(out);
            return;
        }
        ChatChunk chunk = ChatChunk.read(data, !started);
        if (chunk.error()) {
            // An error after the 200 head (the pin refused mid-stream, say): relayed as the stream's end.
            done = true;
            error(UpstreamError.of(500, data), out);
            return;
        }
        if (!started) {
            started = true;
            start(chunk, out);
        }
        if (!chunk.content().isEmpty()) {
            text(chunk.content(), out);
        }
        for (int i = 0; i < chunk.toolCalls().size(); i++) {
            toolCall(chunk.toolCalls().get(i), out);
        }
        keep(chunk);
    }

    @Override
    public final void end(ByteBuf out) {
        if (!done) {
            endStream(out); // an upstream that ended without [DONE]: still a complete answer for the client
        }
    }

    @Override
    public final void fail(StreamAbort reason, String message, ByteBuf out) {
        if (!done) {
            done = true;
            if (!started) {
                // The opening events first: a client may track the answer from them (the openai SDK's stream
                // helper refuses any lifecycle event before response.created).
                started = true;
                start(null, out);
            }
            failed(reason, message, out);
        }
    }

    private void endStream(ByteBuf out) {
        done = true;
        if (!started) {
            started = true;
            start(null, out);
        }
        finish(out);
    }

    private static boolean isDoneMarker(ByteBuf data) {
        int i = data.readerIndex();
        return data.readableBytes() == 6 && data.getByte(i) == '[' && data.getByte(i + 1) == 'D'
                && data.getByte(i + 2) == 'O' && data.getByte(i + 3) == 'N' && data.getByte(i + 4) == 'E'
                && data.getByte(i + 5) == ']';
    }

    /**
     * Writes the events that open the client's stream, once, from the first chunk (the only one read with its id,
     * model and time), or with null when the stream ends before any chunk.
     */
    protected abstract void start(@Nullable ChatChunk first, ByteBuf out);

    /** Writes the events for a chunk's text. */
    protected abstract void text(String text, ByteBuf out) throws InvalidResponse;

    /** Writes the events for one fragment of a tool call. */
    protected abstract void toolCall(ChatChunk.ToolCallDelta call, ByteBuf out) throws InvalidResponse;

    /** Keeps what the end of the stream reports: the finish reason, the usage. */
    protected abstract void keep(ChatChunk chunk);

    /** Writes the wire's error event for an error the upstream sent inside the stream; the stream ends. */
    protected abstract void error(UpstreamError error, ByteBuf out);

    /** Writes the wire's error ending for a stream the upstream failed; called once, after {@link #start}. */
    protected abstract void failed(StreamAbort reason, String message, ByteBuf out);

    /** Writes the events that end the client's stream; called once, after {@link #start}. */
    protected abstract void finish(ByteBuf out);

    /**
     * The slot of chat tool call {@code tool}, or {@link #NONE} when it is new.
     *
     * @throws InvalidResponse when the index is out of range
     */
    protected final int toolSlot(int tool) throws InvalidResponse {
        if (tool < 0) {
            throw new InvalidResponse("a tool call index is negative");
        }
        if (tool >= MAX_TOOL_CALLS) {
            throw new InvalidResponse("more than " + MAX_TOOL_CALLS + " tool calls", StreamAbort.TOO_MANY_TOOL_CALLS);
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
