/**
 * The KV step of the shim dispatch: a prompt encoded off the event loop, its block hashes, and the
 * {@code nvext.token_data} body. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.dispatch;

import org.jspecify.annotations.NullMarked;
