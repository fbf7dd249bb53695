/** Discovery's Prometheus families (Micrometer), with closed label sets. */
@NullMarked
package dev.continuum.router.discovery.metrics;

import org.jspecify.annotations.NullMarked;
