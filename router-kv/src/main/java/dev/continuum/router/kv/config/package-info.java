/** {@code dynamo.kv}: what KV-overlap-aware routing may load and how it scores. See {@code docs/kv-routing.md}. */
@NullMarked
package dev.continuum.router.kv.config;

import org.jspecify.annotations.NullMarked;
