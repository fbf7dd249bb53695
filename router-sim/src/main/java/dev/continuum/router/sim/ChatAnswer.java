package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * What the emulated frontend answers a chat completion with, read from the request as a model server would
 * shape it: text tokens, or, when the request offers tools and the conversation's last turn is the user's, a
 * call of the first offered tool (its arguments streamed in two fragments), as a tool-calling model would; usage
 * on the buffered answer and, when {@code stream_options.include_usage} asks for it, in a last chunk.
 */
final class ChatAnswer {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String TOOL_ARGUMENTS_1 = "{\"city\":";
    static final String TOOL_ARGUMENTS_2 = "\"Paris\"}";

    final boolean stream;
    final boolean includeUsage;
    /** The tool to call, or null for a text answer. */
    final @Nullable String tool;
    final int promptTokens;

    private ChatAnswer(boolean stream, boolean includeUsage, @Nullable String tool, int promptTokens) {
        this.stream = stream;
        this.includeUsage = includeUsage;
        this.tool = tool;
        this.promptTokens = promptTokens;
    }

    static ChatAnswer of(String body, int promptTokens) {
        JsonNode n;
        try {
            n = JSON.readTree(body);
        } catch (IOException e) {
            n = null;
        }
        if (n == null || !n.isObject()) {
            return new ChatAnswer(false, false, null, promptTokens);
        }
        JsonNode messages = n.path("messages");
        JsonNode last = messages.path(messages.size() - 1);
        String tool = null;
        JsonNode tools = n.path("tools");
        if (tools.isArray() && !tools.isEmpty() && "user".equals(last.path("role").asText())
                && !"none".equals(n.path("tool_choice").asText())) {
            tool = tools.path(0).path("function").path("name").asText("tool");
        }
        return new ChatAnswer(n.path("stream").asBoolean(false),
                n.path("stream_options").path("include_usage").asBoolean(false), tool, promptTokens);
    }

    private String usage(int completionTokens) {
        return "\"usage\":{\"prompt_tokens\":" + promptTokens + ",\"completion_tokens\":" + completionTokens
                + ",\"total_tokens\":" + (promptTokens + completionTokens) + "}";
    }

    /** The buffered answer after {@code tokens} tokens. */
    String completion(int tokens) {
        String message = tool == null
                ? "{\"role\":\"assistant\",\"content\":\"Hello from the simulated fleet.\"}"
                : "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_sim_0\",\"type\":\"function\","
                        + "\"function\":{\"name\":\"" + tool + "\",\"arguments\":" + quoted(TOOL_ARGUMENTS_1
                        + TOOL_ARGUMENTS_2) + "}}]}";
        return "{\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"sim\","
                + "\"choices\":[{\"index\":0,\"message\":" + message + ",\"finish_reason\":\""
                + (tool == null ? "stop" : "tool_calls") + "\"}]," + usage(tokens) + "}";
    }

    /** The SSE data of streamed token {@code i} (of a text answer; a tool call's are {@link #toolChunk}). */
    String tokenChunk(int i) {
        return chunk("{\"content\":\"tok" + i + " \"}", null);
    }

    /** The tool call's chunk {@code i}: 0 names the call, 1 and 2 carry the argument fragments, later ones are empty. */
    String toolChunk(int i) {
        String delta = switch (i) {
            case 0 -> "{\"tool_calls\":[{\"index\":0,\"id\":\"call_sim_0\",\"type\":\"function\",\"function\":"
                    + "{\"name\":\"" + tool + "\",\"arguments\":\"\"}}]}";
            case 1 -> "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":" + quoted(TOOL_ARGUMENTS_1) + "}}]}";
            case 2 -> "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":" + quoted(TOOL_ARGUMENTS_2) + "}}]}";
            default -> "{}";
        };
        return chunk(delta, null);
    }

    /** The last chunk with the finish reason, and the usage chunk when asked for; each a full SSE event. */
    String finish(int tokens) {
        String end = "data: " + chunk("{}", tool == null ? "stop" : "tool_calls") + "\n\n";
        if (includeUsage) {
            end += "data: {\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"sim\","
                    + "\"choices\":[]," + usage(tokens) + "}\n\n";
        }
        return end;
    }

    private static String chunk(String delta, @Nullable String finish) {
        return "{\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"sim\","
                + "\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":"
                + (finish == null ? "null" : "\"" + finish + "\"") + "}]}";
    }

    private static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
