/** Load signals over a bounded ZMTP SUB client and the load store; arrives with the load-signals issue. */
@NullMarked
package dev.continuum.router.load;

import org.jspecify.annotations.NullMarked;
