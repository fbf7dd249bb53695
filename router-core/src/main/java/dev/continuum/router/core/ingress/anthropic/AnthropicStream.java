package dev.continuum.router.core.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.ingress.ChatChunk;
import dev.continuum.router.core.ingress.ChatStreamConverter;
import dev.continuum.router.core.ingress.IngressJson;
import dev.continuum.router.core.ingress.UpstreamError;
import dev.continuum.router.core.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;

/**
 * One streamed chat completion as Anthropic's event sequence: {@code message_start}, {@code ping}, then per
 * content block {@code content_block_start}, its deltas ({@code text_delta}, or {@code input_json_delta} for a
 * tool call's argument fragments) and {@code content_block_stop}, then {@code message_delta} (stop reason and
 * usage) and {@code message_stop}. An error event from the upstream becomes Anthropic's {@code error} event and
 * ends the stream.
 *
 * <p>State is bounded: a few scalars and the block index of each tool call, at most {@link #MAX_TOOL_CALLS} of
 * them (more cut the stream); nothing of the text is held. The per-token deltas are written from constant bytes
 * around the token, without a tree or an intermediate string.
 */
final class AnthropicStream extends ChatStreamConverter {
    private static final byte[] DELTA_EVENT = IngressJson.eventStart("content_block_delta");
    private static final byte[] DELTA_HEAD = IngressJson.utf8("{\"type\":\"content_block_delta\",\"index\":");
    private static final byte[] TEXT_DELTA = IngressJson.utf8(",\"delta\":{\"type\":\"text_delta\",\"text\":");
    private static final byte[] JSON_DELTA =
            IngressJson.utf8(",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":");
    private static final byte[] DELTA_END = IngressJson.utf8("}}\n\n");

    /** The open block's index, or {@link #NONE}. */
    private int open = NONE;
    /** The chat tool-call index the open block belongs to, or {@link #NONE} for a text block. */
    private int openTool = NONE;
    private int nextBlock;
    private boolean sawToolCall;
    private String finishReason = "";
    private @Nullable String matchedStop;
    private long inputTokens;
    private long outputTokens;

    @Override
    protected void keep(ChatChunk chunk) {
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
    }

    @Override
    protected void error(UpstreamError error, ByteBuf out) {
        IngressJson.writeEvent(out, "error", AnthropicErrors.envelope(500, error));
    }

    @Override
    protected void start(@Nullable ChatChunk first, ByteBuf out) {
        ObjectNode message = IngressJson.object();
        message.put("id", AnthropicResponses.messageId(first == null ? "" : first.id()));
        message.put("type", "message");
        message.put("role", "assistant");
        message.put("model", first == null ? "" : first.model());
        message.putArray("content");
        message.putNull("stop_reason");
        message.putNull("stop_sequence");
        message.putObject("usage").put("input_tokens", 0).put("output_tokens", 0);
        ObjectNode ev = IngressJson.object().put("type", "message_start");
        ev.set("message", message);
        IngressJson.writeEvent(out, "message_start", ev);
        IngressJson.writeEvent(out, "ping", IngressJson.object().put("type", "ping"));
    }

    @Override
    protected void text(String text, ByteBuf out) {
        if (open == NONE || openTool != NONE) {
            closeBlock(out);
            open = nextBlock++;
            openTool = NONE;
            ObjectNode ev = IngressJson.object().put("type", "content_block_start").put("index", open);
            ev.putObject("content_block").put("type", "text").put("text", "");
            IngressJson.writeEvent(out, "content_block_start", ev);
        }
        delta(out, TEXT_DELTA, text);
    }

    /** {@code content_block_delta} of the open block: {@code kind} (the delta's head) then {@code value}. */
    private void delta(ByteBuf out, byte[] kind, String value) {
        out.writeBytes(DELTA_EVENT).writeBytes(DELTA_HEAD);
        IngressJson.writeDecimal(out, open);
        out.writeBytes(kind);
        IngressJson.writeJsonString(out, value);
        out.writeBytes(DELTA_END);
    }

    @Override
    protected void toolCall(ChatChunk.ToolCallDelta call, ByteBuf out) throws IngressConverter.InvalidResponse {
        int tool = call.index();
        int block = toolSlot(tool);
        sawToolCall = true;
        if (block == NONE) {
            closeBlock(out);
            open = nextBlock++;
            openTool = tool;
            toolSlot(tool, open);
            ObjectNode ev = IngressJson.object().put("type", "content_block_start").put("index", open);
            ObjectNode b = ev.putObject("content_block").put("type", "tool_use");
            String id = call.id();
            String name = call.name();
            b.put("id", id == null ? "toolu_" + tool : id);
            b.put("name", name == null ? "" : name);
            b.putObject("input");
            IngressJson.writeEvent(out, "content_block_start", ev);
        } else if (block != open) {
            // Fragments of an earlier call after another block opened: Anthropic's blocks do not interleave.
            throw new IngressConverter.InvalidResponse("interleaved tool call fragments");
        }
        String args = call.arguments();
        if (!args.isEmpty()) {
            delta(out, JSON_DELTA, args);
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

    @Override
    protected void finish(ByteBuf out) {
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
