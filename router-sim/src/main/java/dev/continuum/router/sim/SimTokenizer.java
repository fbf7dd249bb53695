package dev.continuum.router.sim;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
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

    /**
     * Set to {@code true} (the replays): every prompt of the trace is tokenized before the replay starts
     * ({@link #tokenizeAhead}), so the simulated fleet serves it without tokenizing on the replay's clock.
     */
    static final String AHEAD_PROPERTY = "continuum.sim.tokenizer.ahead";

    private final HuggingFaceTokenizer tokenizer;
    private final @Nullable ChunkedEncoder chunked;
    /** Prompts tokenized ahead, by their rendered text's fingerprint; empty unless {@link #tokenizeAhead} ran. */
    private final Map<TextKey, int[]> ahead = new ConcurrentHashMap<>();
    private final LongAdder servedAhead = new LongAdder();
    private final LongAdder tokenizedServing = new LongAdder();

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

    /**
     * The prompt's token IDs (shared when tokenized ahead: never modify them); throws
     * {@link IllegalArgumentException} for a body that is not a chat request.
     */
    int[] promptTokens(String body) {
        String text = render(body);
        if (!ahead.isEmpty()) {
            int[] known = ahead.get(TextKey.of(text));
            if (known != null) {
                servedAhead.increment();
                return known;
            }
            tokenizedServing.increment();
        }
        return encode(text);
    }

    /** Whether the replays tokenize their prompts ahead ({@value #AHEAD_PROPERTY}). */
    static boolean aheadRequested() {
        return Boolean.getBoolean(AHEAD_PROPERTY);
    }

    /**
     * Tokenizes the {@code count} bodies in parallel and keeps their IDs, so that serving them later costs a render
     * and a lookup. A replay does this before its clock starts: on a machine the router under test shares with
     * the simulated fleet, the fleet's own tokenizing would otherwise take the cores a real fleet's hosts would
     * spend, and delay its KV events by the time it takes. A body that differs from every one given here (the
     * router rewrote it) is tokenized when served, and counted. With {@code keep} false only the IDs are returned
     * (the oracles read them) and serving tokenizes as before.
     */
    int[][] tokenizeAhead(int count, IntFunction<String> bodies, boolean keep) {
        return IntStream.range(0, count).parallel().mapToObj(i -> {
            String text = render(bodies.apply(i));
            int[] ids = encode(text);
            if (keep) {
                ahead.put(TextKey.of(text), ids);
            }
            return ids;
        }).toArray(int[][]::new);
    }

    /** Prompts served with IDs tokenized ahead, and prompts tokenized while served although some were. */
    long[] aheadCounts() {
        return new long[] {servedAhead.sum(), tokenizedServing.sum()};
    }

    /**
     * A rendered prompt's identity in the table of prompts tokenized ahead: its length and two independent 64-bit
     * polynomial hashes of its characters (the replay's own texts, a few thousand of them: no adversary, and a
     * collision would need both hashes and the length to agree).
     */
    record TextKey(int length, long h1, long h2) {
        static TextKey of(String text) {
            long h1 = 0x9E3779B97F4A7C15L;
            long h2 = 0xC2B2AE3D27D4EB4FL;
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                h1 = (h1 ^ c) * 0x100000001B3L;
                h2 = h2 * 0xD6E8FEB86659FD93L + c;
            }
            return new TextKey(text.length(), h1, h2 ^ (h2 >>> 29));
        }
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
