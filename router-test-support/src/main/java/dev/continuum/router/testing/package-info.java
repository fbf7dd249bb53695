/**
 * Fixtures shared by every module's tests: Netty leak detection that fails the test, free ports,
 * local upstream HTTP servers. Test scope only; never a dependency of main code.
 */
@NullMarked
package dev.continuum.router.testing;

import org.jspecify.annotations.NullMarked;
