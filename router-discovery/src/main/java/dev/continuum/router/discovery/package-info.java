/**
 * The fleet view every routing decision reads: {@link dev.continuum.router.discovery.DynamoRegistry} and its
 * immutable {@link dev.continuum.router.discovery.DynamoSnapshot} of Dynamo workers and event publishers.
 */
@NullMarked
package dev.continuum.router.discovery;

import org.jspecify.annotations.NullMarked;
