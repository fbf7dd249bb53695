/**
 * Block hashes as a Dynamo worker computes them for its KV events: XXH3-64 over complete blocks of token IDs.
 * See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.hash;

import org.jspecify.annotations.NullMarked;
