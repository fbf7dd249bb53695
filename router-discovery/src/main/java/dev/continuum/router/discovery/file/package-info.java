/** Reading a single-node Dynamo fleet from Dynamo's file store ({@code DYN_DISCOVERY_BACKEND=file}). */
@NullMarked
package dev.continuum.router.discovery.file;

import org.jspecify.annotations.NullMarked;
