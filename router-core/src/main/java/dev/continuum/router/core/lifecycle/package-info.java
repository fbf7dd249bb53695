/**
 * The one start/stop contract every long-lived component implements, and the ordered stack that
 * starts components in dependency order and stops them in reverse.
 */
@NullMarked
package dev.continuum.router.core.lifecycle;

import org.jspecify.annotations.NullMarked;
