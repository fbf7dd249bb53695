/**
 * The router's configuration as immutable, validated records, and the contracts for loading,
 * validating and hot-reloading it. Every record here is already valid: loaders report problems
 * with dotted paths and never build a record from a value that failed validation.
 */
@NullMarked
package dev.continuum.router.core.config;

import org.jspecify.annotations.NullMarked;
