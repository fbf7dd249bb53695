/** The HTTP/2+TLS event-bus listener for in-cluster brokers; arrives with its own issue. */
@NullMarked
package dev.continuum.router.eventbus;

import org.jspecify.annotations.NullMarked;
