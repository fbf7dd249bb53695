/**
 * Replica sync (docs/replicas.md): router replicas of one group publish their active-sequence accounting on a
 * router-owned NATS subject and fold each peer's stream into their own view as a separate partition.
 */
@NullMarked
package dev.continuum.router.replicas;

import org.jspecify.annotations.NullMarked;
