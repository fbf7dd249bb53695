/** Helpers for logging strings that come from outside the process (fleet records, clients, peers). */
@NullMarked
package dev.continuum.router.core.logging;

import org.jspecify.annotations.NullMarked;
