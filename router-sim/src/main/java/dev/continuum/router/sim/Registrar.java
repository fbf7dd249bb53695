package dev.continuum.router.sim;

import java.util.List;

/**
 * Registers simulated workers in one store the way a Dynamo process registers itself. The fleet asks for each
 * worker's instance ID first (the store decides it), then registers every worker's records, calls
 * {@link #heartbeat} every {@link SimFleet.Options#heartbeat} and, on close, removes everything it wrote.
 */
interface Registrar extends AutoCloseable {
    /** One record: an etcd-style bucket ({@code v1/instances}, {@code v1/mdc}, {@code v1/event_channels}) and key. */
    record Entry(String bucket, String key, String json) {
    }

    /** What one worker registers. */
    record Registration(SimWorker worker, List<Entry> entries) {
    }

    /** The instance ID the store gives the worker called {@code workerName} (a DNS-1123 name, unique). */
    long instanceId(String workerName) throws Exception;

    void register(List<Registration> workers) throws Exception;

    /** Keeps the registrations live, where the store needs the owner to do so. */
    void heartbeat();

    /** Deregisters everything this registrar wrote; never throws. */
    @Override
    void close();

    static Registrar open(Store store) {
        // Java 17: no pattern switch over the sealed interface yet.
        if (store instanceof Store.File f) {
            return new FileRegistrar(f.root());
        }
        if (store instanceof Store.Etcd e) {
            return new EtcdRegistrar(e.endpoints());
        }
        Store.Kubernetes k = (Store.Kubernetes) store;
        return new KubernetesRegistrar(k.namespace(), k.objects(), k.clients().get());
    }
}
