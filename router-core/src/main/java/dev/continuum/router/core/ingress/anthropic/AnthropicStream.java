package dev.continuum.router.core.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.ingress.ChatChunk;
import dev.continuum.router.core.ingress.IngressJson;
import dev.continuum.router.core.ingress.UpstreamError;
import dev.continuum.router.core.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One streamed chat completion as Anthropic's event sequence: {@code message_start}, {@code ping}, then per
 * content block {@code content_block_start}, its deltas ({@code text_delta}, or {@code input_json_delta} for a
 * tool call's argument fragments) and {@code content_block_stop}, then {@code message_delta} (stop reason and
 * usage) and {@code message_stop}. An error event from the upstream becomes Anthropic's {@code error} event and
 * ends the stream.
 *
 * <p>State is bounded: a few scalars and the block index of each tool call, at most {@link #MAX_TOOL_CALLS} of
 * them (more cut the stream); nothing of the text is held.
 */
final class AnthropicStream implements IngressConverter.StreamConverter {
    static final int MAX_TOOL_CALLS = 128;
    private static final int NONE = -1;

    private boolean started;
    private boolean done;
    /** The open block's index, or {@link #NONE}. */
    private int open = NONE;
    /** The chat tool-call index the open block belongs to, or {@link #NONE} for a text block. */
    private int openTool = NONE;
    private int nextBlock;
    /** Block index per chat tool-call index (NONE = not seen). */
    private int[] toolBlocks = new int[0];
    private boolean sawToolCall;
    private String finishReason = "";
    private @Nullable String matchedStop;
    private long inputTokens;
    private long outputTokens;

    @Override
    public ByteBuf event(ByteBuf data, ByteBufAllocator alloc) throws IngressConverter.InvalidResponse {
        ByteBuf out = alloc.buffer(256);
        try {
            if (done) {
                return out;
            }
            if (isDone(data)) {
                finish(out);
                return out;
            }
            ChatChunk chunk = ChatChunk.read(data);
            if (chunk.error()) {
                // An error after the 200 head (the pin refused mid-stream, say): relayed as the stream's end.
                done = true;
                IngressJson.writeEvent(out, "error", AnthropicErrors.envelope(500, UpstreamError.of(500, data)));
                return out;
            }
            start(chunk.id(), chunk.model(), out);
            if (!chunk.content().isEmpty()) {
                text(chunk.content(), out);
            }
            for (ChatChunk.ToolCallDelta call : chunk.toolCalls()) {
                toolCall(call, out);
            }
            String finish = chunk.finishReason();
            if (finish != null) {
                finishReason = finish;
                matchedStop = chunk.matchedStop();
            }
            ChatChunk.Usage usage = chunk.usage();
            if (usage != null) {
                inputTokens = usage.promptTokens();
                outputTokens = usage.completionTokens();
            }
            return out;
        } catch (IngressConverter.InvalidResponse | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    @Override
    public ByteBuf end(ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(128);
        if (!done) {
            finish(out); // an upstream that ended without [DONE]: still a complete message for the client
        }
        return out;
    }

    private static boolean isDone(ByteBuf data) {
        return data.readableBytes() == 6 && data.toString(StandardCharsets.US_ASCII).equals("[DONE]");
    }

    private void start(String id, String model, ByteBuf out) {
        if (started) {
            return;
        }
        started = true;
        ObjectNode message = IngressJson.object();
        message.put("id", AnthropicResponses.messageId(id));
        message.put("type", "message");
        message.put("role", "assistant");
        message.put("model", model);
        message.putArray("content");
        message.putNull("stop_reason");
        message.putNull("stop_sequence");
        message.putObject("usage").put("input_tokens", 0).put("output_tokens", 0);
        ObjectNode ev = IngressJson.object().put("type", "message_start");
        ev.set("message", message);
        IngressJson.writeEvent(out, "message_start", ev);
        IngressJson.writeEvent(out, "ping", IngressJson.object().put("type", "ping"));
    }

    private void text(String text, ByteBuf out) {
        if (open == NONE || openTool != NONE) {
            closeBlock(out);
            open = nextBlock++;
            openTool = NONE;
            ObjectNode ev = IngressJson.object().put("type", "content_block_start").put("index", open);
            ev.putObject("content_block").put("type", "text").put("text", "");
            IngressJson.writeEvent(out, "content_block_start", ev);
        }
        IngressJson.writeStringEvent(out, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":" + open
                + ",\"delta\":{\"type\":\"text_delta\",\"text\":", text, "}}");
    }

    private void toolCall(ChatChunk.ToolCallDelta call, ByteBuf out) throws IngressConverter.InvalidResponse {
        int tool = call.index();
        if (tool < 0 || tool >= MAX_TOOL_CALLS) {
            throw new IngressConverter.InvalidResponse("tool call index out of range");
        }
        sawToolCall = true;
        if (tool >= toolBlocks.length) {
            int old = toolBlocks.length;
            toolBlocks = Arrays.copyOf(toolBlocks, Math.min(MAX_TOOL_CALLS, Math.max(4, tool + 1) * 2));
            Arrays.fill(toolBlocks, old, toolBlocks.length, NONE);
        }
        if (toolBlocks[tool] == NONE) {
            closeBlock(out);
            open = nextBlock++;
            openTool = tool;
            toolBlocks[tool] = open;
            ObjectNode ev = IngressJson.object().put("type", "content_block_start").put("index", open);
            ObjectNode block = ev.putObject("content_block").put("type", "tool_use");
            String id = call.id();
            String name = call.name();
            block.put("id", id == null ? "toolu_" + tool : id);
            block.put("name", name == null ? "" : name);
            block.putObject("input");
            IngressJson.writeEvent(out, "content_block_start", ev);
        } else if (toolBlocks[tool] != open) {
            // Fragments of an earlier call after another block opened: Anthropic's blocks do not interleave.
            throw new IngressConverter.InvalidResponse("interleaved tool call fragments");
        }
        String args = call.arguments();
        if (!args.isEmpty()) {
            IngressJson.writeStringEvent(out, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":"
                    + open + ",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":", args, "}}");
        }
    }

    private void closeBlock(ByteBuf out) {
        if (open != NONE) {
            IngressJson.writeEvent(out, "content_block_stop",
                    IngressJson.object().put("type", "content_block_stop").put("index", open));
            open = NONE;
            openTool = NONE;
        }
    }

    private void finish(ByteBuf out) {
        done = true;
        if (!started) {
            start("", "", out);
        }
        closeBlock(out);
        ObjectNode choice = IngressJson.object().put("finish_reason", finishReason);
        if (matchedStop != null) {
            choice.put("stop_reason", matchedStop);
        }
        ObjectNode ev = IngressJson.object().put("type", "message_delta");
        StopReasons.put(ev.putObject("delta"), choice, sawToolCall);
        ev.putObject("usage").put("input_tokens", inputTokens).put("output_tokens", outputTokens);
        IngressJson.writeEvent(out, "message_delta", ev);
        IngressJson.writeEvent(out, "message_stop", IngressJson.object().put("type", "message_stop"));
    }
}
