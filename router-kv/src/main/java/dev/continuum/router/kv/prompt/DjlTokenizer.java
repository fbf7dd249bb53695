package dev.continuum.router.kv.prompt;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.TokenizersLibrary;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * A {@code tokenizer.json} loaded with DJL's Hugging Face tokenizers (the Rust {@code tokenizers} crate over
 * JNI), configured so that it never truncates (DJL truncates at 512 tokens by default), never pads and adds no
 * special tokens. DJL never downloads anything here: the tokenizer comes from bytes already verified, and the
 * native library from the jar (see {@link #configureNative}).
 *
 * <p>Only the token IDs are read back from the native encoding. DJL's {@code encode} also copies out, for every
 * token, its string, character span, word, type and mask entries (a Java object or two per token, each a JNI
 * call) and then drops them: on an 8,000-token prompt that was most of the cost of tokenizing
 * (docs/benchmarks.md). The native call is the one DJL's {@code encode} makes; DJL's Java-side text preparation
 * (prefix space, lower-casing, accent stripping) is off for the options used here, so the IDs are the same.
 */
final class DjlTokenizer implements PromptTokenizer {
    private static final Map<String, String> OPTIONS =
            Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false");

    private final HuggingFaceTokenizer tokenizer;

    private DjlTokenizer(HuggingFaceTokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    static DjlTokenizer load(byte[] tokenizerJson) throws IOException {
        return new DjlTokenizer(HuggingFaceTokenizer.newInstance(new ByteArrayInputStream(tokenizerJson), OPTIONS));
    }

    /**
     * Points DJL at a writable cache directory for the bundled native library it extracts, and turns on its
     * offline mode so that a missing platform library is an error instead of a download. Settings already made
     * by the operator (system properties or environment) are kept.
     */
    static synchronized void configureNative(Path cacheDir) {
        setIfAbsent("DJL_CACHE_DIR", cacheDir.toString());
        setIfAbsent("ENGINE_CACHE_DIR", cacheDir.toString());
        setIfAbsent("ai.djl.offline", "true");
    }

    private static void setIfAbsent(String name, String value) {
        if (System.getProperty(name) == null && System.getenv(name) == null) {
            System.setProperty(name, value);
        }
    }

    @Override
    public int[] encode(String text, int maxTokens) {
        RenderPool.beforeTokenizing(text.length()); // long new text moves the job to the pool's heavy lane
        long encoding = TokenizersLibrary.LIB.encode(tokenizer.getHandle(), text, false);
        long[] ids;
        try {
            ids = TokenizersLibrary.LIB.getTokenIds(encoding);
        } finally {
            TokenizersLibrary.LIB.deleteEncoding(encoding);
        }
        if (ids.length > maxTokens) {
            throw new TemplateFailure.TooLarge("prompt of " + ids.length + " tokens (at most " + maxTokens + ")");
        }
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = (int) ids[i];
        }
        return out;
    }

    /** DJL's own {@code encode}, all of its per-token data built (the benchmark's baseline, and tests' check). */
    long[] djlEncode(String text) {
        Encoding encoding = tokenizer.encode(text, false, false);
        return encoding.getIds();
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
