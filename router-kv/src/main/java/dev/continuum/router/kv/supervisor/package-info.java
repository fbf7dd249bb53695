/**
 * The KV supervisor: one {@code kv-events} subscription per publisher in the registry, over router-load's
 * bounded ZMTP client with the KV limits, delivering to the KV index's ingest. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.supervisor;

import org.jspecify.annotations.NullMarked;
