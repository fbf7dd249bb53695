package dev.continuum.router.kv.prompt;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * A {@code tokenizer.json} loaded with DJL's Hugging Face tokenizers (the Rust {@code tokenizers} crate over
 * JNI), configured so that it never truncates (DJL truncates at 512 tokens by default), never pads and adds no
 * special tokens. DJL never downloads anything here: the tokenizer comes from bytes already verified, and the
 * native library from the jar (see {@link #configureNative}).
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
        Encoding encoding = tokenizer.encode(text, false, false);
        long[] ids = encoding.getIds();
        if (ids.length > maxTokens) {
            throw new TemplateFailure.TooLarge("prompt of " + ids.length + " tokens (at most " + maxTokens + ")");
        }
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            out[i] = (int) ids[i];
        }
        return out;
    }

    @Override
    public void close() {
        tokenizer.close();
    }
}
