/** Metric names, closed label sets and the meters of the HTTP ingress and the OpenAI-wire proxy. */
@NullMarked
package dev.continuum.router.proxy.metrics;

import org.jspecify.annotations.NullMarked;
