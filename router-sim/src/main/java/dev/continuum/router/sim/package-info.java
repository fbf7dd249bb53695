/**
 * Stand-ins for the fleet, written from the wire specifications and sharing no router code. For now
 * an OpenAI-wire upstream (buffered and SSE) that the quickstart and the proxy benchmarks run
 * against; the Dynamo fleet simulator and direct-mode frontend emulator join it with their issue.
 */
@NullMarked
package dev.continuum.router.sim;

import org.jspecify.annotations.NullMarked;
