/** Client API keys (constant-time lookup, per-key policy) and lock-free token-bucket rate limits. */
@NullMarked
package dev.continuum.router.core.auth;

import org.jspecify.annotations.NullMarked;
