/** The process: command line, wiring of the modules, lifecycle and graceful shutdown. */
@NullMarked
package dev.continuum.router.app;

import org.jspecify.annotations.NullMarked;
