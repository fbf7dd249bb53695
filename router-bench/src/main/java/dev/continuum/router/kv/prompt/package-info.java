/**
 * Benchmarks of router-kv's package-private prompt pipeline parts (the segmented tokenizer alone), in that package
 * so that they reach them.
 */
@NullMarked
package dev.continuum.router.kv.prompt;

import org.jspecify.annotations.NullMarked;
