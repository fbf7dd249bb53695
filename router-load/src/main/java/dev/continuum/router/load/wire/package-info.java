/** Exact decoding of the kv_metrics payload (ActiveLoad), on the event plane's frame and msgpack cursor. */
@NullMarked
package dev.continuum.router.load.wire;

import org.jspecify.annotations.NullMarked;
