/**
 * Keeping the registry current: passes (read everything, then follow changes) over a
 * {@link dev.continuum.router.discovery.source.WatchSource}, the reconnect backoff, and the supervisor that
 * starts, replaces and stops watchers as configuration changes.
 */
@NullMarked
package dev.continuum.router.discovery.watch;

import org.jspecify.annotations.NullMarked;
