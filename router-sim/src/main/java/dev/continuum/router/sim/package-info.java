/**
 * Stand-ins for the fleet, written from the wire specifications and sharing no router code. An
 * OpenAI-wire upstream (buffered and SSE) that the quickstart and the proxy benchmarks run against, and
 * a direct-mode frontend emulator ({@code DirectFrontend}); the simulated Dynamo workers (registration and
 * kv_metrics publishing) are still to come.
 */
@NullMarked
package dev.continuum.router.sim;

import org.jspecify.annotations.NullMarked;
