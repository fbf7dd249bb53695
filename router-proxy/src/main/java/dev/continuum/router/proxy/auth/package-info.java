/** Client API keys (constant-time lookup, per-key policy) and lock-free token-bucket rate limits. */
@NullMarked
package dev.continuum.router.proxy.auth;

import org.jspecify.annotations.NullMarked;
