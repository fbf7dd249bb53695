/**
 * From a chat-completion body to the token IDs the worker's engine computes: the model's chat template
 * rendered as Hugging Face's {@code apply_chat_template(..., add_generation_prompt=True)} does, then its
 * Hugging Face tokenizer, bounded and off the event loops. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.prompt;

import org.jspecify.annotations.NullMarked;
