/**
 * The chat path's body rewrites: {@code global_prompts} merged into the system prompt and the single leading
 * system message some backends need (docs/configuration.md).
 */
@NullMarked
package dev.continuum.router.proxy.prompts;

import org.jspecify.annotations.NullMarked;
