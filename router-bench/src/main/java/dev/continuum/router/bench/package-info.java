/**
 * JMH benchmarks of the router's hot paths, one class per path. Built only with the Maven profile
 * {@code bench}; the command and the recorded results are in docs/benchmarks.md ("JMH hot paths").
 * Inputs are built in {@code @Setup} from upstream's wire shapes (docs/decisions.md); only public API of the
 * router modules is used, plus the one seam {@code RequestBodyInspection} of router-core.
 */
@NullMarked
package dev.continuum.router.bench;

import org.jspecify.annotations.NullMarked;
