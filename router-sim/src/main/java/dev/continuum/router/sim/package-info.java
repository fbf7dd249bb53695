/**
 * Stand-ins for the fleet, written from the wire specifications and sharing no router code: an OpenAI-wire
 * upstream (buffered and SSE) that the quickstart and the proxy benchmarks run against, a direct-mode frontend
 * emulator ({@code DirectFrontend}), and a simulated Dynamo fleet ({@code SimFleet}) whose workers register in
 * Dynamo's file store, in etcd under their own leases or as Kubernetes objects ({@code Registrar}), and publish
 * their request-driven load on kv_metrics ZMQ PUB sockets.
 */
@NullMarked
package dev.continuum.router.sim;

import org.jspecify.annotations.NullMarked;
