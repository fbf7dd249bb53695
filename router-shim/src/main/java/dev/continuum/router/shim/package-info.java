/** Worker pickers and direct-mode shim dispatch; arrives with the worker-pinning issue. */
@NullMarked
package dev.continuum.router.shim;

import org.jspecify.annotations.NullMarked;
