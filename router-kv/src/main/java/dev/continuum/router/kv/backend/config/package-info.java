/** {@code dynamo.kv_cache_index}: the backend KV cache index's sources, bound and cross-checked with field paths. */
@NullMarked
package dev.continuum.router.kv.backend.config;

import org.jspecify.annotations.NullMarked;
