/**
 * Load signals: the kv_metrics subscription supervisor, the load store the pickers read, the
 * {@code dynamo.load} config section, metrics and the admin view.
 */
@NullMarked
package dev.continuum.router.load;

import org.jspecify.annotations.NullMarked;
