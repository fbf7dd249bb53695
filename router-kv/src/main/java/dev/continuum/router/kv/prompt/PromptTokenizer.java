package dev.continuum.router.kv.prompt;

/**
 * A loaded tokenizer: rendered text in, token IDs out, with no special tokens added (the template wrote
 * them, as transformers' {@code apply_chat_template(tokenize=True)} encodes with
 * {@code add_special_tokens=False}) and no truncation.
 */
interface PromptTokenizer extends AutoCloseable {
    /**
     * @throws TemplateFailure.TooLarge when the text has more than {@code maxTokens} tokens
     */
    int[] encode(String text, int maxTokens);

    @Override
    void close();
}
