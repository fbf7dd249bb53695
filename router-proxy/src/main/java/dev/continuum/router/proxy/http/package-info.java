/** The Netty HTTP ingress: listeners, pipeline, request limits, routing, readiness and graceful shutdown. */
@NullMarked
package dev.continuum.router.proxy.http;

import org.jspecify.annotations.NullMarked;
