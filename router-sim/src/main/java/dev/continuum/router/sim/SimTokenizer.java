package dev.continuum.router.sim;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How a simulated Qwen3 worker turns a chat request into the token IDs its engine caches: the conversation in
 * ChatML, as Qwen3's chat template renders a text-only conversation with {@code add_generation_prompt}, encoded
 * with the model's {@code tokenizer.json} through DJL's Hugging Face tokenizers (no special tokens added: the
 * rendering writes them).
 *
 * <p>The rendering, per message: {@code <|im_start|>ROLE\nCONTENT<|im_end|>\n}, where an array content is its
 * {@code text} parts joined by a newline and an assistant turn keeps only what follows its last
 * {@code </think>} (left newlines stripped), as the template does for earlier turns; then
 * {@code <|im_start|>assistant\n}, followed by an empty think block when
 * {@code chat_template_kwargs.enable_thinking} is false. Tools, tool calls and tool results are not rendered
 * as the template renders them: the simulator's token IDs (and so its cache hits) for such requests are its own.
 *
 * <p>Thread-safe: DJL's tokenizer encodes concurrently.
 */
final class SimTokenizer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Set to {@code true} (a replay at a high speed-up): prompts are tokenized through {@link ChunkedEncoder}. */
    static final String CHUNK_CACHE_PROPERTY = "continuum.sim.tokenizer.chunkCache";

    private final HuggingFaceTokenizer tokenizer;
    private final @Nullable ChunkedEncoder chunked;

    private SimTokenizer(HuggingFaceTokenizer tokenizer, boolean chunkCache) {
        this.tokenizer = tokenizer;
        this.chunked = chunkCache ? ChunkedEncoder.check(this::encodeWhole) : null;
        if (chunkCache && chunked == null) {
            System.err.println("sim: the tokenizer fails the chunk check; prompts are tokenized whole");
        }
    }

    static SimTokenizer load(Path tokenizerJson) {
        // DJL must never download: its native library comes from the jar, extracted to the temporary directory.
        setIfAbsent("ai.djl.offline", "true");
        setIfAbsent("DJL_CACHE_DIR", Path.of(System.getProperty("java.io.tmpdir"), "continuum-sim-djl").toString());
        try (var in = Files.newInputStream(tokenizerJson)) {
            return new SimTokenizer(HuggingFaceTokenizer.newInstance(in,
                    Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false")),
                    Boolean.getBoolean(CHUNK_CACHE_PROPERTY));
        } catch (IOException e) {
            throw new UncheckedIOException("tokenizer " + tokenizerJson + ": cannot be read", e);
        }
    }

    private static void setIfAbsent(String name, String value) {
        if (System.getProperty(name) == null && System.getenv(name) == null) {
            System.setProperty(name, value);
        }
    }

    /** The prompt's token IDs; throws {@link IllegalArgumentException} for a body that is not a chat request. */
    int[] promptTokens(String body) {
        return encode(render(body));
    }

    int[] encode(String text) {
        return chunked != null ? chunked.encode(text) : encodeWhole(text);
    }

    private int[] encodeWhole(String text) {
        long[] ids = tokenizer.encode(text, false, false).getIds();
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = (int) ids[i];
        }
        return out;
    }

    static String render(String body) {
        JsonNode root;
        try {
            root = JSON.readTree(body);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON", e);
        }
        JsonNode messages = root == null ? null : root.get("messages");
        if (messages == null || !messages.isArray()) {
            throw new IllegalArgumentException("no messages");
        }
        StringBuilder out = new StringBuilder();
        for (JsonNode m : messages) {
            String role = m.path("role").asText("user");
            String content = content(m.get("content"));
            if (role.equals("assistant")) {
                int think = content.lastIndexOf("</think>");
                if (think >= 0) {
                    content = stripLeadingNewlines(content.substring(think + "</think>".length()));
                }
            }
            out.append("<|im_start|>").append(role).append('\n').append(content).append("<|im_end|>\n");
        }
        out.append("<|im_start|>assistant\n");
        JsonNode thinking = root.path("chat_template_kwargs").get("enable_thinking");
        if (thinking != null && thinking.isBoolean() && !thinking.booleanValue()) {
            out.append("<think>\n\n</think>\n\n");
        }
        return out.toString();
    }

    private static String content(@Nullable JsonNode content) {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        StringBuilder parts = new StringBuilder();
        if (content.isArray()) {
            for (JsonNode part : content) {
                if (part.path("type").asText().equals("text")) {
                    if (parts.length() > 0) {
                        parts.append('\n');
                    }
                    parts.append(part.path("text").asText());
                }
            }
        }
        return parts.toString();
    }

    private static String stripLeadingNewlines(String s) {
        int i = 0;
        while (i < s.length() && s.charAt(i) == '\n') {
            i++;
        }
        return s.substring(i);
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
