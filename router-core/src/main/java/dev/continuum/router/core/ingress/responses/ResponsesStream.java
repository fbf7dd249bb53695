package dev.continuum.router.core.ingress.responses;

import com.fasterxml.jackson.databind.node.ArrayNode;
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
 * One streamed chat completion as the Responses event sequence: {@code response.created},
 * {@code response.in_progress}; per output item {@code response.output_item.added}, then for a message
 * {@code response.content_part.added}, {@code response.output_text.delta}..., {@code response.output_text.done},
 * {@code response.content_part.done}, or for a tool call {@code response.function_call_arguments.delta}...,
 * {@code response.function_call_arguments.done}; {@code response.output_item.done}; and last
 * {@code response.completed} (or {@code response.incomplete}) with the whole response. Every event carries its
 * {@code sequence_number}.
 *
 * <p>The ".done" events and the final response repeat what was streamed, so the text and arguments are held:
 * at most {@link IngressConverter#MAX_BUFFERED_RESPONSE_BYTES} characters in all (a longer answer cuts the
 * stream), and at most {@link #MAX_TOOL_CALLS} tool calls.
 */
final class ResponsesStream implements IngressConverter.StreamConverter {
    static final int MAX_TOOL_CALLS = 128;
    private static final int NONE = -1;

    private long sequence;
    private boolean started;
    private boolean done;
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
    /** Output index per chat tool-call index (NONE = not seen). */
    private int[] toolItems = new int[0];
    private long held;
    private String finishReason = "";
    private ChatChunk.@Nullable Usage usage;

    @Override
    public ByteBuf event(ByteBuf data, ByteBufAllocator alloc) throws IngressConverter.InvalidResponse {
        ByteBuf out = alloc.buffer(256);
        try {
            if (done) {
                return out;
            }
            if (data.readableBytes() == 6 && data.toString(StandardCharsets.US_ASCII).equals("[DONE]")) {
                finish(out);
                return out;
            }
            ChatChunk chunk = ChatChunk.read(data);
            if (chunk.error()) {
                done = true;
                UpstreamError e = UpstreamError.of(500, data);
                ObjectNode ev = IngressJson.object().put("type", "error");
                ev.put("code", e.code() == null ? "server_error" : e.code()).put("message", e.message()).putNull("param");
                emit(out, ev);
                return out;
            }
            start(chunk, out);
            if (!chunk.content().isEmpty()) {
                text(chunk.content(), out);
            }
            for (ChatChunk.ToolCallDelta call : chunk.toolCalls()) {
                toolCall(call, out);
            }
            String finish = chunk.finishReason();
            if (finish != null) {
                finishReason = finish;
            }
            ChatChunk.Usage u = chunk.usage();
            if (u != null) {
                usage = u;
            }
            return out;
        } catch (IngressConverter.InvalidResponse | RuntimeException e) {
            out.release();
            throw e;
        }
    }

    @Override
    public ByteBuf end(ByteBufAllocator alloc) {
        ByteBuf out = alloc.buffer(256);
        if (!done) {
            finish(out);
        }
        return out;
    }

    private void emit(ByteBuf out, ObjectNode event) {
        event.put("sequence_number", sequence++);
        IngressJson.writeEvent(out, event.path("type").asText(), event);
    }

    private void start(@Nullable ChatChunk chunk, ByteBuf out) {
        if (started) {
            return;
        }
        started = true;
        id = ResponseObjects.responseId(chunk == null ? "" : chunk.id());
        createdAt = chunk == null ? 0 : chunk.created();
        model = chunk == null ? "" : chunk.model();
        ObjectNode r = ResponseObjects.response(id, createdAt, model, "in_progress");
        emit(out, withResponse("response.created", r));
        emit(out, withResponse("response.in_progress", r));
    }

    private static ObjectNode withResponse(String type, ObjectNode response) {
        ObjectNode ev = IngressJson.object().put("type", type);
        ev.set("response", response);
        return ev;
    }

    private void hold(int chars) throws IngressConverter.InvalidResponse {
        held += chars;
        if (held > IngressConverter.MAX_BUFFERED_RESPONSE_BYTES) {
            throw new IngressConverter.InvalidResponse("answer too long to stream as a response");
        }
    }

    /** The open item's ID, made once when it opens. */
    private String openItemId = "";

    private String openId() {
        return openItemId;
    }

    private void open(int tool) {
        open = output.size();
        output.addNull(); // its place, filled when it completes
        openTool = tool;
        openItemId = ResponseObjects.itemId(tool == NONE ? "msg" : "fc", id, open);
    }

    private void text(String text, ByteBuf out) throws IngressConverter.InvalidResponse {
        if (open == NONE || openTool != NONE) {
            closeItem(out);
            open(NONE);
            ObjectNode added = IngressJson.object().put("type", "response.output_item.added").put("output_index", open);
            added.set("item", ResponseObjects.message(openId(), "in_progress", ""));
            emit(out, added);
            ObjectNode part = IngressJson.object().put("type", "response.content_part.added").put("item_id", openId())
                    .put("output_index", open).put("content_index", 0);
            part.set("part", ResponseObjects.textPart(""));
            emit(out, part);
        }
        hold(text.length());
        openText.append(text);
        // The per-token event, written directly (item IDs are ASCII the router made: no escaping needed).
        IngressJson.writeStringEvent(out, "response.output_text.delta", "{\"type\":\"response.output_text.delta\","
                + "\"item_id\":\"" + openId() + "\",\"output_index\":" + open + ",\"content_index\":0,\"delta\":", text,
                ",\"logprobs\":[],\"sequence_number\":" + sequence++ + "}");
    }

    private void toolCall(ChatChunk.ToolCallDelta call, ByteBuf out) throws IngressConverter.InvalidResponse {
        int tool = call.index();
        if (tool < 0 || tool >= MAX_TOOL_CALLS) {
            throw new IngressConverter.InvalidResponse("tool call index out of range");
        }
        if (tool >= toolItems.length) {
            int old = toolItems.length;
            toolItems = Arrays.copyOf(toolItems, Math.min(MAX_TOOL_CALLS, Math.max(4, tool + 1) * 2));
            Arrays.fill(toolItems, old, toolItems.length, NONE);
        }
        if (toolItems[tool] == NONE) {
            closeItem(out);
            open(tool);
            toolItems[tool] = open;
            String callId = call.id();
            String name = call.name();
            openCallId = callId == null ? "call_" + tool : callId;
            openName = name == null ? "" : name;
            hold(openCallId.length() + openName.length());
            ObjectNode added = IngressJson.object().put("type", "response.output_item.added").put("output_index", open);
            added.set("item", ResponseObjects.functionCall(openId(), openCallId, openName, "", "in_progress"));
            emit(out, added);
        } else if (toolItems[tool] != open) {
            throw new IngressConverter.InvalidResponse("interleaved tool call fragments");
        }
        String args = call.arguments();
        if (!args.isEmpty()) {
            hold(args.length());
            openText.append(args);
            IngressJson.writeStringEvent(out, "response.function_call_arguments.delta",
                    "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"" + openId()
                            + "\",\"output_index\":" + open + ",\"delta\":", args, ",\"sequence_number\":" + sequence++ + "}");
        }
    }

    private void closeItem(ByteBuf out) {
        if (open == NONE) {
            return;
        }
        String itemId = openId();
        String text = openText.toString();
        ObjectNode item;
        if (openTool == NONE) {
            emit(out, IngressJson.object().put("type", "response.output_text.done").put("item_id", itemId)
                    .put("output_index", open).put("content_index", 0).put("text", text));
            ObjectNode part = IngressJson.object().put("type", "response.content_part.done").put("item_id", itemId)
                    .put("output_index", open).put("content_index", 0);
            part.set("part", ResponseObjects.textPart(text));
            emit(out, part);
            item = ResponseObjects.message(itemId, "completed", text);
        } else {
            emit(out, IngressJson.object().put("type", "response.function_call_arguments.done").put("item_id", itemId)
                    .put("output_index", open).put("arguments", text));
            item = ResponseObjects.functionCall(itemId, openCallId, openName, text, "completed");
        }
        ObjectNode ev = IngressJson.object().put("type", "response.output_item.done").put("output_index", open);
        ev.set("item", item);
        emit(out, ev);
        output.set(open, item);
        open = NONE;
        openTool = NONE;
        openText.setLength(0);
    }

    private void finish(ByteBuf out) {
        done = true;
        if (!started) {
            start(null, out);
        }
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
