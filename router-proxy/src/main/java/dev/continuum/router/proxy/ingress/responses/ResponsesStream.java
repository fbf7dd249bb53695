package dev.continuum.router.proxy.ingress.responses;

import com.fasterxml.jackson.databind.node.ArrayNode;
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
 * One streamed chat completion as the Responses event sequence: {@code response.created},
 * {@code response.in_progress}; per output item {@code response.output_item.added}, then for a message
 * {@code response.content_part.added}, {@code response.output_text.delta}..., {@code response.output_text.done},
 * {@code response.content_part.done}, or for a tool call {@code response.function_call_arguments.delta}...,
 * {@code response.function_call_arguments.done}; {@code response.output_item.done}; and last
 * {@code response.completed} (or {@code response.incomplete}) with the whole response; a stream the upstream
 * fails ends with {@code response.failed} and {@code error} instead ({@link #fail}). Every event carries its
 * {@code sequence_number}.
 *
 * <p>The ".done" events and the final response repeat what was streamed, so the text and arguments are held:
 * at most {@link IngressConverter#MAX_BUFFERED_RESPONSE_BYTES} characters in all (a longer answer cuts the
 * stream), and at most {@link #MAX_TOOL_CALLS} tool calls. The per-token deltas, and a message item's events
 * around them (added, part added, text done, part done, item done), are written from constant bytes around their
 * values (the open item's ID made into bytes once), without a tree or an intermediate string; the two opening
 * events share one written copy of the response. Tool-call items, errors and the final response are built as trees.
 */
final class ResponsesStream extends ChatStreamConverter {
    private static final byte[] TEXT_DELTA = IngressJson.utf8("event: response.output_text.delta\ndata: "
            + "{\"type\":\"response.output_text.delta\",\"item_id\":\"");
    private static final byte[] OUTPUT_INDEX = IngressJson.utf8("\",\"output_index\":");
    private static final byte[] TEXT_DELTA_VALUE = IngressJson.utf8(",\"content_index\":0,\"delta\":");
    private static final byte[] TEXT_DELTA_SEQUENCE = IngressJson.utf8(",\"logprobs\":[],\"sequence_number\":");
    private static final byte[] ARGS_DELTA = IngressJson.utf8("event: response.function_call_arguments.delta\ndata: "
            + "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"");
    private static final byte[] ARGS_DELTA_VALUE = IngressJson.utf8(",\"delta\":");
    private static final byte[] ARGS_DELTA_SEQUENCE = IngressJson.utf8(",\"sequence_number\":");
    private static final byte[] EVENT_END = IngressJson.utf8("}\n\n");
    private static final byte[] CREATED = IngressJson.utf8("event: response.created\ndata: "
            + "{\"type\":\"response.created\",\"response\":");
    private static final byte[] IN_PROGRESS = IngressJson.utf8("event: response.in_progress\ndata: "
            + "{\"type\":\"response.in_progress\",\"response\":");
    private static final byte[] SEQUENCE = IngressJson.utf8(",\"sequence_number\":");
    private static final byte[] MESSAGE_ADDED = IngressJson.utf8("event: response.output_item.added\ndata: "
            + "{\"type\":\"response.output_item.added\",\"output_index\":");
    private static final byte[] MESSAGE_ITEM = IngressJson.utf8(",\"item\":{\"type\":\"message\",\"id\":\"");
    private static final byte[] MESSAGE_ADDED_END = IngressJson.utf8("\",\"status\":\"in_progress\","
            + "\"role\":\"assistant\",\"content\":[]}");
    private static final byte[] PART_ADDED = IngressJson.utf8("event: response.content_part.added\ndata: "
            + "{\"type\":\"response.content_part.added\",\"item_id\":\"");
    private static final byte[] PART_INDEX = IngressJson.utf8(",\"content_index\":0,\"part\":");
    private static final byte[] EMPTY_PART = IngressJson.utf8("{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}");
    private static final byte[] TEXT_DONE = IngressJson.utf8("event: response.output_text.done\ndata: "
            + "{\"type\":\"response.output_text.done\",\"item_id\":\"");
    private static final byte[] TEXT_DONE_VALUE = IngressJson.utf8(",\"content_index\":0,\"text\":");
    private static final byte[] PART_DONE = IngressJson.utf8("event: response.content_part.done\ndata: "
            + "{\"type\":\"response.content_part.done\",\"item_id\":\"");
    private static final byte[] PART_TEXT = IngressJson.utf8("{\"type\":\"output_text\",\"text\":");
    private static final byte[] PART_TEXT_END = IngressJson.utf8(",\"annotations\":[]}");
    private static final byte[] MESSAGE_DONE = IngressJson.utf8("event: response.output_item.done\ndata: "
            + "{\"type\":\"response.output_item.done\",\"output_index\":");
    private static final byte[] MESSAGE_DONE_STATUS = IngressJson.utf8("\",\"status\":\"completed\","
            + "\"role\":\"assistant\",\"content\":[");
    private static final byte[] MESSAGE_DONE_END = IngressJson.utf8("]}");

    private long sequence;
    private String id = "resp_continuum";
    private long createdAt;
    private String model = "";
    /** The completed output items, in order. */
    private final ArrayNode output = IngressJson.object().putArray("output");
    /** The open item's output index, or NONE. */
    private int open = NONE;
    /** The open item's chat tool-call index, or NONE for a message. */
    private int openTool = NONE;
    private final StringBuilder openText = new StringBuilder();
    private String openCallId = "";
    private String openName = "";
    /** The open item's ID, made once when it opens, and its bytes for the deltas. */
    private String openItemId = "";
    private byte[] openItemIdBytes = new byte[0];
    private long held;
    private String finishReason = "";
    private ChatChunk.@Nullable Usage usage;

    @Override
    protected void keep(ChatChunk chunk) {
        String finish = chunk.finishReason();
        if (finish != null) {
            finishReason = finish;
        }
        ChatChunk.Usage u = chunk.usage();
        if (u != null) {
            usage = u;
        }
    }

    @Override
    protected void error(UpstreamError e, ByteBuf out) {
        ObjectNode ev = IngressJson.object().put("type", "error");
        ev.put("code", e.code() == null ? "server_error" : e.code()).put("message", e.message()).putNull("param");
        emit(out, ev);
    }

    /**
     * {@code response.failed} (the response so far, its completed items, {@code error}), then the {@code error}
     * event: a client that tracks the response sees it failed, and the SDKs raise the {@code error} event as their
     * API error (they pass {@code response.failed} on without raising).
     */
    @Override
    protected void failed(StreamAbort reason, String message, ByteBuf out) {
        ObjectNode r = ResponseObjects.response(id, createdAt, model, "failed");
        ArrayNode done = r.putArray("output");
        for (int i = 0; i < output.size(); i++) {
            if (!output.get(i).isNull()) {
                done.add(output.get(i));
            }
        }
        r.putObject("error").put("code", "server_error").put("message", message);
        ChatChunk.Usage u = usage;
        if (u != null) {
            r.set("usage", ResponseObjects.usage(u.promptTokens(), u.completionTokens(), u.cachedTokens(),
                    u.reasoningTokens()));
        }
        emit(out, withResponse("response.failed", r));
        error(new UpstreamError(message, "server_error"), out);
    }

    private void emit(ByteBuf out, ObjectNode event) {
        event.put("sequence_number", sequence++);
        IngressJson.writeEvent(out, event.path("type").asText(), event);
    }

    @Override
    protected void start(@Nullable ChatChunk chunk, ByteBuf out) {
        id = ResponseObjects.responseId(chunk == null ? "" : chunk.id());
        createdAt = chunk == null ? 0 : chunk.created();
        model = chunk == null ? "" : chunk.model();
        out.writeBytes(CREATED);
        int from = out.writerIndex();
        IngressJson.writeJson(out, ResponseObjects.response(id, createdAt, model, "in_progress"));
        int length = out.writerIndex() - from;
        endEvent(out);
        out.writeBytes(IN_PROGRESS);
        out.ensureWritable(length);
        out.writeBytes(out, from, length); // the same response, written once (an earlier range of the buffer)
        endEvent(out);
    }

    /** {@code ,"sequence_number":n}, the event's end, and the blank line. */
    private void endEvent(ByteBuf out) {
        out.writeBytes(SEQUENCE);
        IngressJson.writeDecimal(out, sequence++);
        out.writeBytes(EVENT_END);
    }

    private static ObjectNode withResponse(String type, ObjectNode response) {
        ObjectNode ev = IngressJson.object().put("type", type);
        ev.set("response", response);
        return ev;
    }

    private void hold(int chars) throws IngressConverter.InvalidResponse {
        held += chars;
        if (held > IngressConverter.MAX_BUFFERED_RESPONSE_BYTES) {
            throw new IngressConverter.InvalidResponse("answer too long to stream as a response",
                    StreamAbort.ANSWER_TOO_LONG);
        }
    }

    private void open(int tool) {
        open = output.size();
        output.addNull(); // its place, filled when it completes
        openTool = tool;
        openItemId = ResponseObjects.itemId(tool == NONE ? "msg" : "fc", id, open);
        // Item IDs are ASCII the router made (ResponseObjects.responseId keeps letters, digits, '_' and '-').
        openItemIdBytes = IngressJson.utf8(openItemId);
    }

    @Override
    protected void text(String text, ByteBuf out) throws IngressConverter.InvalidResponse {
        if (open == NONE || openTool != NONE) {
            closeItem(out);
            open(NONE);
            out.writeBytes(MESSAGE_ADDED);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(MESSAGE_ITEM).writeBytes(openItemIdBytes).writeBytes(MESSAGE_ADDED_END);
            endEvent(out);
            out.writeBytes(PART_ADDED).writeBytes(openItemIdBytes).writeBytes(OUTPUT_INDEX);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(PART_INDEX).writeBytes(EMPTY_PART);
            endEvent(out);
        }
        hold(text.length());
        openText.append(text);
        delta(out, TEXT_DELTA, TEXT_DELTA_VALUE, text, TEXT_DELTA_SEQUENCE);
    }

    /**
     * A per-token delta of the open item, written from constant bytes: {@code head}, the item's ID and output index,
     * {@code beforeValue}, {@code value} as a JSON string, {@code beforeSequence}, the sequence number.
     */
    private void delta(ByteBuf out, byte[] head, byte[] beforeValue, String value, byte[] beforeSequence) {
        out.writeBytes(head).writeBytes(openItemIdBytes).writeBytes(OUTPUT_INDEX);
        IngressJson.writeDecimal(out, open);
        out.writeBytes(beforeValue);
        IngressJson.writeJsonString(out, value);
        out.writeBytes(beforeSequence);
        IngressJson.writeDecimal(out, sequence++);
        out.writeBytes(EVENT_END);
    }

    @Override
    protected void toolCall(ChatChunk.ToolCallDelta call, ByteBuf out) throws IngressConverter.InvalidResponse {
        int tool = call.index();
        int item = toolSlot(tool);
        if (item == NONE) {
            closeItem(out);
            open(tool);
            toolSlot(tool, open);
            String callId = call.id();
            String name = call.name();
            openCallId = callId == null ? "call_" + tool : callId;
            openName = name == null ? "" : name;
            hold(openCallId.length() + openName.length());
            ObjectNode added = IngressJson.object().put("type", "response.output_item.added").put("output_index", open);
            added.set("item", ResponseObjects.functionCall(openItemId, openCallId, openName, "", "in_progress"));
            emit(out, added);
        } else if (item != open) {
            throw new IngressConverter.InvalidResponse("interleaved tool call fragments",
                    StreamAbort.INTERLEAVED_TOOL_CALLS);
        }
        String args = call.arguments();
        if (!args.isEmpty()) {
            hold(args.length());
            openText.append(args);
            delta(out, ARGS_DELTA, ARGS_DELTA_VALUE, args, ARGS_DELTA_SEQUENCE);
        }
    }

    private void closeItem(ByteBuf out) {
        if (open == NONE) {
            return;
        }
        String itemId = openItemId;
        String text = openText.toString();
        if (openTool == NONE) {
            out.writeBytes(TEXT_DONE).writeBytes(openItemIdBytes).writeBytes(OUTPUT_INDEX);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(TEXT_DONE_VALUE);
            IngressJson.writeJsonStringAsTree(out, text);
            endEvent(out);
            out.writeBytes(PART_DONE).writeBytes(openItemIdBytes).writeBytes(OUTPUT_INDEX);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(PART_INDEX).writeBytes(PART_TEXT);
            IngressJson.writeJsonStringAsTree(out, text);
            out.writeBytes(PART_TEXT_END);
            endEvent(out);
            out.writeBytes(MESSAGE_DONE);
            IngressJson.writeDecimal(out, open);
            out.writeBytes(MESSAGE_ITEM).writeBytes(openItemIdBytes).writeBytes(MESSAGE_DONE_STATUS).writeBytes(PART_TEXT);
            IngressJson.writeJsonStringAsTree(out, text);
            out.writeBytes(PART_TEXT_END).writeBytes(MESSAGE_DONE_END);
            endEvent(out);
            output.set(open, ResponseObjects.message(itemId, "completed", text));
        } else {
            emit(out, IngressJson.object().put("type", "response.function_call_arguments.done").put("item_id", itemId)
                    .put("output_index", open).put("arguments", text));
            ObjectNode item = ResponseObjects.functionCall(itemId, openCallId, openName, text, "completed");
            ObjectNode ev = IngressJson.object().put("type", "response.output_item.done").put("output_index", open);
            ev.set("item", item);
            emit(out, ev);
            output.set(open, item);
        }
        open = NONE;
        openTool = NONE;
        openText.setLength(0);
    }

    @Override
    protected void finish(ByteBuf out) {
        closeItem(out);
        ObjectNode r = ResponseObjects.response(id, createdAt, model, "completed");
        r.set("output", output);
        ResponseObjects.finish(r, finishReason);
        ChatChunk.Usage u = usage;
        r.set("usage", u == null ? ResponseObjects.usage(IngressJson.object())
                : ResponseObjects.usage(u.promptTokens(), u.completionTokens(), u.cachedTokens(), u.reasoningTokens()));
        emit(out, withResponse(r.path("status").asText().equals("completed") ? "response.completed"
                : "response.incomplete", r));
    }
}
