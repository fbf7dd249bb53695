/**
 * Worker pinning through a direct-mode shim: the {@link dev.continuum.router.shim.DynamoWorkerPicker} that
 * chooses a decode and a prefill (worker, dp_rank) per request, the {@code dynamo.shim} config section, and
 * the dispatch hook that writes the {@code x-dynamo-*} pins.
 */
@NullMarked
package dev.continuum.router.shim;

import org.jspecify.annotations.NullMarked;
