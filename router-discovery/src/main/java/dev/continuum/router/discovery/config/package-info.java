/**
 * {@code dynamo.discovery}: the immutable settings records, their validation rules, and the binding into
 * core's configuration framework.
 */
@NullMarked
package dev.continuum.router.discovery.config;

import org.jspecify.annotations.NullMarked;
