/**
 * Reading a Dynamo fleet from etcd, read-only: range gets and watches through the narrow
 * {@link dev.continuum.router.discovery.etcd.EtcdReader}, which has no put, delete or lease operation.
 */
@NullMarked
package dev.continuum.router.discovery.etcd;

import org.jspecify.annotations.NullMarked;
