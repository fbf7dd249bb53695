/**
 * The model card's tokenizer and template files: pinned by checksum, fetched bounded and off the event loops,
 * verified with BLAKE3 and kept in a content-addressed cache. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.artifacts;

import org.jspecify.annotations.NullMarked;
