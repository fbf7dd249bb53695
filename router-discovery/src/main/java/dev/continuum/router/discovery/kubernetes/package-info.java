/**
 * The Kubernetes sources: operator-labelled Pods ({@code kubernetes_pods}) and DynamoWorkerMetadata resources
 * joined with EndpointSlices ({@code kubernetes}). Read-only: list and watch, nothing else.
 */
@NullMarked
package dev.continuum.router.discovery.kubernetes;

import org.jspecify.annotations.NullMarked;
