/** Dynamo fleet simulator written from the spec, sharing no router code; arrives with the worker-pinning issue. */
@NullMarked
package dev.continuum.router.sim;

import org.jspecify.annotations.NullMarked;
