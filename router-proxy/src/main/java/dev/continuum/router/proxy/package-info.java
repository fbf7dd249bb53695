/** The generic OpenAI-wire proxy: backend selection, health checks, circuit breakers, retries, upstream relay. */
@NullMarked
package dev.continuum.router.proxy;

import org.jspecify.annotations.NullMarked;
