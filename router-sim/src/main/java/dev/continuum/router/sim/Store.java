package dev.continuum.router.sim;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;

/** Where the simulated workers register: the choice of {@link Registrar}. */
public sealed interface Store {
    /** Dynamo's file store rooted at {@code root} (its {@code DYN_FILE_KV}). */
    record File(Path root) implements Store {
    }

    /** An etcd cluster: each worker holds its own 10 s lease, and its instance ID is the lease ID. */
    record Etcd(List<String> endpoints) implements Store {
        public Etcd {
            endpoints = List.copyOf(endpoints);
            if (endpoints.isEmpty()) {
                throw new IllegalArgumentException("etcd: at least one endpoint");
            }
        }
    }

    /**
     * Kubernetes objects in one Kubernetes namespace, written through {@code clients} (a fresh client per fleet;
     * the registrar closes it).
     */
    record Kubernetes(String namespace, KubernetesObjects objects, Supplier<KubernetesClient> clients)
            implements Store {
        /** The client of the default kubeconfig (or the in-cluster service account). */
        public static Kubernetes defaultKubeconfig(String namespace, KubernetesObjects objects) {
            return new Kubernetes(namespace, objects, () -> new KubernetesClientBuilder().build());
        }
    }

    /**
     * Which objects stand for a worker. {@code METADATA}: a DynamoWorkerMetadata resource per worker and an
     * EndpointSlice per (Dynamo namespace, component) marking it ready, as Dynamo's Kubernetes discovery has them.
     * {@code PODS}: operator-labelled Pods, Running and Ready. {@code ALL}: both, the resources owned by their Pods.
     * Pods carry a status a kubelet would own, so they suit an API server without nodes (or the mock server).
     */
    enum KubernetesObjects { METADATA, PODS, ALL }
}
