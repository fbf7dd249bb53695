/** {@code dynamo.event_bus}: the listener's configuration, bound and validated with field paths. */
@NullMarked
package dev.continuum.router.eventbus.config;

import org.jspecify.annotations.NullMarked;
