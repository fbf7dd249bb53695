/**
 * What every discovery source offers the watcher: passes that read the complete state of the watched
 * prefixes and then follow changes. Implementations: {@code etcd} and {@code file}.
 */
@NullMarked
package dev.continuum.router.discovery.source;

import org.jspecify.annotations.NullMarked;
