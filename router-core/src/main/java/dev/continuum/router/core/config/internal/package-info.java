/**
 * Not API: the YAML tree, interpolation, unit parsing and suggestions behind the config loader.
 * Public only so the loader in the parent package can use it; other modules must not depend on it.
 */
@NullMarked
package dev.continuum.router.core.config.internal;

import org.jspecify.annotations.NullMarked;
