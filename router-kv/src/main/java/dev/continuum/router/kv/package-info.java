/** KV-overlap-aware selection (kv-events, radix index, tokenizers); arrives with its own issue. */
@NullMarked
package dev.continuum.router.kv;

import org.jspecify.annotations.NullMarked;
