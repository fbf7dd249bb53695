/**
 * Decision records: one compact, immutable record per routed request (the prompt's statistics and each
 * candidate rank's cost terms, the winner, the fallback reason), kept in a ring bounded by count and bytes, and
 * the decision-quality counters derived from them. Records never hold prompt text, worker addresses or client
 * credentials. See {@code docs/decisions-page.md}.
 */
@NullMarked
package dev.continuum.router.shim.decisions;

import org.jspecify.annotations.NullMarked;
