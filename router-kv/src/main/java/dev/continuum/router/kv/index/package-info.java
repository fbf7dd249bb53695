/**
 * The bounded, single-writer radix index of the fleet's device KV blocks, fed by kv-events and read
 * lock-free by the KV-aware picker through {@code PrefixOverlap}. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.index;

import org.jspecify.annotations.NullMarked;
