/** Fleet discovery (etcd, Kubernetes, file store), the reducer and the registry; arrives with the etcd discovery issue. */
@NullMarked
package dev.continuum.router.discovery;

import org.jspecify.annotations.NullMarked;
