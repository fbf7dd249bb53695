package dev.continuum.router.proxy.ingress.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.ingress.ChatChunk;
import dev.continuum.router.proxy.ingress.ChatStreamConverter;
import dev.continuum.router.proxy.ingress.IngressJson;
import dev.continuum.router.proxy.ingress.UpstreamError;
import dev.continuum.router.proxy.metrics.StreamAbort;
import dev.continuum.router.proxy.IngressConverter;
import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;

/**
 * One streamed chat completion as Anthropic's event sequence: {@code message_start}, {@code ping}, then per
 * content block {@code content_block_start}, its deltas ({@code text_delta}, or {@code input_json_delta} for a
 * tool call's argument fragments) and {@code content_block_stop}, then {@code message_delta} (stop reason and
 * usage) and {@code message_stop}. An error event from the upstream becomes Anthropic's {@code error} event and
 * ends the stream, and so does a stream the upstream fails ({@link #fail}).
 *
 * <p>State is bounded: a few scalars and the block index of each tool call, at most {@link #MAX_TOOL_CALLS} of
 * them (more cut the stream); nothing of the text is held. Every event but a tool call's block start and an
 * upstream error (rare, and built as trees) is written from constant bytes around its few values, without a tree or
 * an intermediate string: the deltas once per token, and the fixed events around them once per stream each, which
 * through trees cost about as much as all the deltas of a short answer.
 */
final class AnthropicStream extends ChatStreamConverter {
    private static final byte[] DELTA_EVENT = IngressJson.eventStart("content_block_delta");
    private static final byte[] DELTA_HEAD = IngressJson.utf8("{\"type\":\"content_block_delta\",\"index\":");
    private static final byte[] TEXT_DELTA = IngressJson.utf8(",\"delta\":{\"type\":\"text_delta\",\"text\":");
    private static final byte[] JSON_DELTA =
            IngressJson.utf8(",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":");
    private static final byte[] DELTA_END = IngressJson.utf8("}}\n\n");
    private static final byte[] EVENT_END = IngressJson.utf8("}\n\n");
    private static final byte[] MESSAGE_START = IngressJson.utf8("event: message_start\ndata: "
            + "{\"type\":\"message_start\",\"message\":{\"id\":");
    private static final byte[] MESSAGE_MODEL = IngressJson.utf8(",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    /** The rest of {@code message_start}, and {@code ping}. */
    private static final byte[] MESSAGE_START_END = IngressJson.utf8(",\"content\":[],\"stop_reason\":null,"
            + "\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n\n"
            + "event: ping\ndata: {\"type\":\"ping\"}\n\n");
    private static final byte[] TEXT_BLOCK_START = IngressJson.utf8("event: content_block_start\ndata: "
            + "{\"type\":\"content_block_start\",\"index\":");
    private static final byte[] TEXT_BLOCK_START_END =
            IngressJson.utf8(",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n");
    private static final byte[] BLOCK_STOP = IngressJson.utf8("event: content_block_stop\ndata: "
            + "{\"type\":\"content_block_stop\",\"index\":");
    private static final byte[] MESSAGE_DELTA = IngressJson.utf8("event: message_delta\ndata: "
            + "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
    private static final byte[] STOP_SEQUENCE = IngressJson.utf8(",\"stop_sequence\":");
    private static final byte[] NULL = IngressJson.utf8("null");
    private static final byte[] INPUT_TOKENS = IngressJson.utf8("},\"usage\":{\"input_tokens\":");
    private static final byte[] OUTPUT_TOKENS = IngressJson.utf8(",\"output_tokens\":");
    /** The end of {@code message_delta}, and {@code message_stop}. */
    private static final byte[] MESSAGE_END = IngressJson.utf8("}}\n\n"
            + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");

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

    /** Anthropic's {@code error} event, as its API sends one mid-stream; the SDKs raise it as their API error. */
    @Override
    protected void failed(StreamAbort reason, String message, ByteBuf out) {
        IngressJson.writeEvent(out, "error", AnthropicErrors.envelope(reason.timeout() ? 504 : 502,
                new UpstreamError(message, null)));
    }

    @Override
    protected void start(@Nullable ChatChunk first, ByteBuf out) {
        out.writeBytes(MESSAGE_START);
        IngressJson.writeJsonString(out, AnthropicResponses.messageId(first == null ? "" : first.id()));
        out.writeBytes(MESSAGE_MODEL);
        IngressJson.writeJsonString(out, first == null ? "" : first.model());
        out.writeBytes(MESSAGE_START_END);
    }

    @Override
    protected void text(String text, ByteBuf out) {
        if (open == NONE || openTool != NONE) {
            closeBlock(out);
            open = nextBlock++;
            openTool = NONE;
            out.writeBytes(TEXT_BLOCK_START);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(TEXT_BLOCK_START_END);
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
            throw new IngressConverter.InvalidResponse("interleaved tool call fragments",
                    StreamAbort.INTERLEAVED_TOOL_CALLS);
        }
        String args = call.arguments();
        if (!args.isEmpty()) {
            delta(out, JSON_DELTA, args);
        }
    }

    private void closeBlock(ByteBuf out) {
        if (open != NONE) {
            out.writeBytes(BLOCK_STOP);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(EVENT_END);
            open = NONE;
            openTool = NONE;
        }
    }

    @Override
    protected void finish(ByteBuf out) {
        closeBlock(out);
        String stop = matchedStop;
        String reason = StopReasons.reason(finishReason, stop != null, sawToolCall);
        out.writeBytes(MESSAGE_DELTA);
        IngressJson.writeJsonString(out, reason);
        out.writeBytes(STOP_SEQUENCE);
        if (stop != null && reason.equals(StopReasons.STOP_SEQUENCE)) {
            IngressJson.writeJsonString(out, stop);
        } else {
            out.writeBytes(NULL);
        }
        out.writeBytes(INPUT_TOKENS);
        IngressJson.writeDecimal(out, inputTokens);
        out.writeBytes(OUTPUT_TOKENS);
        IngressJson.writeDecimal(out, outputTokens);
        out.writeBytes(MESSAGE_END);
    }
}
