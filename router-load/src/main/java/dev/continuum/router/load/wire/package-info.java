/** Exact decoding of Dynamo's event-plane messages: the four-part frame, the msgpack envelope and ActiveLoad. */
@NullMarked
package dev.continuum.router.load.wire;

import org.jspecify.annotations.NullMarked;
