/**
 * Bounded decoding shared by every event-channel family: Dynamo's four-part frame, the msgpack envelope, and the
 * msgpack cursor that family decoders (ActiveLoad, RouterEvent) read payloads with. Drops are values, never thrown
 * out of a decoder.
 */
@NullMarked
package dev.continuum.router.eventplane.wire;

import org.jspecify.annotations.NullMarked;
