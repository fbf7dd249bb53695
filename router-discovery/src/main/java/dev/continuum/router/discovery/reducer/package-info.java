/**
 * The pure discovery reducer: Dynamo's etcd records (endpoints, model cards, event channels) folded by key
 * into a {@link dev.continuum.router.discovery.FleetView}. No I/O; time comes from an injected clock.
 */
@NullMarked
package dev.continuum.router.discovery.reducer;

import org.jspecify.annotations.NullMarked;
