/**
 * The operator-facing HTTP surface beside the proxy: {@code /admin/*} behind authentication with an
 * audit line per call, the masked config readback and reload trigger, {@code /metrics} and
 * {@code /health}. Routes plug into the core server as local routes.
 */
@NullMarked
package dev.continuum.router.admin;

import org.jspecify.annotations.NullMarked;
