package dev.continuum.router.sim;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * etcd (upstream transports/etcd/lease.rs): every simulated worker is a Dynamo process of its own, so each one grants
 * its own lease of {@value #TTL_SECONDS} s, keeps it alive, uses the lease ID as its instance ID and writes each of its
 * keys under that lease with "create if absent". Close revokes the leases, so the keys vanish at once; a killed
 * simulator's keys vanish when the TTL runs out.
 */
final class EtcdRegistrar implements Registrar {
    static final long TTL_SECONDS = 10;
    private static final System.Logger LOG = System.getLogger(EtcdRegistrar.class.getName());
    private static final long TIMEOUT_SECONDS = 10;

    private final Client client;
    private final Map<String, Long> leases = new ConcurrentHashMap<>();
    private final List<CloseableClient> keepAlives = new CopyOnWriteArrayList<>();

    EtcdRegistrar(List<String> endpoints) {
        this.client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build();
    }

    @Override
    public long instanceId(String workerName) throws Exception {
        long lease = client.getLeaseClient().grant(TTL_SECONDS).get(TIMEOUT_SECONDS, TimeUnit.SECONDS).getID();
        leases.put(workerName, lease);
        // jetcd renews at a third of the TTL, as Dynamo's keep-alive task does.
        keepAlives.add(client.getLeaseClient().keepAlive(lease, new StreamObserver<LeaseKeepAliveResponse>() {
            @Override
            public void onNext(LeaseKeepAliveResponse response) {
            }

            @Override
            public void onError(Throwable t) {
                // Upstream's runtime shuts down when its lease is lost; a simulator says so and goes on.
                LOG.log(System.Logger.Level.WARNING, "sim fleet: etcd lease " + Long.toHexString(lease) + " of "
                        + workerName + " lost: " + t);
            }

            @Override
            public void onCompleted() {
            }
        }));
        return lease;
    }

    @Override
    public void register(List<Registration> workers) throws Exception {
        for (Registration r : workers) {
            Long lease = leases.get(r.worker().name());
            if (lease == null) {
                throw new IllegalStateException(r.worker().name() + ": no lease granted");
            }
            for (Entry e : r.entries()) {
                ByteSequence key = bytes(e.bucket() + "/" + e.key());
                TxnResponse done = client.getKVClient().txn()
                        .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.version(0)))
                        .Then(Op.put(key, bytes(e.json()), PutOption.builder().withLeaseId(lease).build()))
                        .commit().get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (!done.isSucceeded()) {
                    throw new IllegalStateException(e.bucket() + "/" + e.key() + ": the key exists already");
                }
            }
        }
    }

    @Override
    public void heartbeat() {
        // jetcd's keep-alive stream renews the leases.
    }

    @Override
    public void close() {
        keepAlives.forEach(CloseableClient::close);
        keepAlives.clear();
        for (long lease : leases.values()) {
            try {
                client.getLeaseClient().revoke(lease).get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                // The TTL retires a lease a stop could not revoke.
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        leases.clear();
        client.close();
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
