/**
 * KV-aware selection among plain {@code backends[]} (docs/kv-routing.md, "Use in selection"): the proxy's
 * {@code BackendChooser} renders and tokenizes a listed model's prompt with its pinned tokenizer, off the event loop,
 * and scores each candidate by the prefix the backend KV cache index says it holds against the requests this router
 * has in flight to it.
 */
@NullMarked
package dev.continuum.router.kv.selection;

import org.jspecify.annotations.NullMarked;
