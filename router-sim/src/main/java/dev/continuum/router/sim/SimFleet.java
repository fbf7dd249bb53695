package dev.continuum.router.sim;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.zeromq.ZContext;

/**
 * A simulated Dynamo fleet on this machine: pools of prefill, decode and aggregated workers of several models in
 * several namespaces, registered as Dynamo processes register (endpoint, model card, kv_metrics event channel) in
 * one {@link Store} through its {@link Registrar}, each publishing its {@code ActiveLoad} over its own ZMQ PUB
 * socket (one sample per data-parallel rank), behind a direct-mode frontend ({@link DirectFrontend}) that serves
 * the requests pinned to them at the pace their {@link WorkerLoad} allows.
 *
 * <p>One daemon thread owns every ZMQ socket: it publishes every {@link Options#publishInterval}, calls the
 * registrar's heartbeat every {@link Options#heartbeat} and closes the sockets on {@link #close}, which first
 * deregisters every worker.
 */
public final class SimFleet implements AutoCloseable {
    static final String ENDPOINT = "generate";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(SimFleet.class.getName());

    /**
     * What to simulate. Without {@code pools}, one namespace and one model: with {@code prefillWorkers == 0} the
     * decode workers are aggregated workers (component {@code backend}); otherwise they are decode workers behind a
     * prefill pool (components {@code prefill} and {@code decode}). With {@code pools}, exactly those pools (and
     * {@code namespace}, {@code model}, {@code prefillWorkers} and {@code decodeWorkers} are not used).
     *
     * @param root  the file store's root ({@code DYN_FILE_KV}); may be null when {@code store} is another store
     * @param pools the pools to run; empty for the single-model topology
     * @param store where the workers register; null for the file store at {@code root}
     * @param slots requests one data-parallel rank runs at once ({@code max_num_seqs}); later ones queue
     * @param kv    the prefill and aggregated workers' prefix caches, kv-events and prefill time; null for none
     */
    public record Options(@Nullable Path root, String namespace, String model, int prefillWorkers, int decodeWorkers,
                          long totalKvBlocks, int kvCacheBlockSize, long maxNumBatchedTokens, Duration heartbeat,
                          Duration publishInterval, String frontendHost, int frontendPort, int chunks,
                          long chunkDelayMs, List<Pool> pools, Store store, int slots, @Nullable SimKv kv) {
        public Options {
            pools = pools == null ? List.of() : List.copyOf(pools);
            if (store == null) {
                if (root == null) {
                    throw new IllegalArgumentException("root: null (expected: the file store's root, or a store)");
                }
                store = new Store.File(root);
            }
            check("prefillWorkers", prefillWorkers, prefillWorkers >= 0, ">= 0");
            check("decodeWorkers", decodeWorkers, !pools.isEmpty() || decodeWorkers >= 1, ">= 1");
            check("totalKvBlocks", totalKvBlocks, totalKvBlocks >= 1, ">= 1");
            check("kvCacheBlockSize", kvCacheBlockSize, kvCacheBlockSize >= 1, ">= 1");
            check("maxNumBatchedTokens", maxNumBatchedTokens, maxNumBatchedTokens >= 1, ">= 1");
            check("heartbeat", heartbeat, heartbeat.toMillis() >= 10, ">= 10ms");
            check("publishInterval", publishInterval, publishInterval.toMillis() >= 10, ">= 10ms");
            check("slots", slots, slots >= 1, ">= 1");
        }

        /** Without KV caches. */
        public Options(@Nullable Path root, String namespace, String model, int prefillWorkers, int decodeWorkers,
                       long totalKvBlocks, int kvCacheBlockSize, long maxNumBatchedTokens, Duration heartbeat,
                       Duration publishInterval, String frontendHost, int frontendPort, int chunks,
                       long chunkDelayMs, List<Pool> pools, Store store, int slots) {
            this(root, namespace, model, prefillWorkers, decodeWorkers, totalKvBlocks, kvCacheBlockSize,
                    maxNumBatchedTokens, heartbeat, publishInterval, frontendHost, frontendPort, chunks, chunkDelayMs,
                    pools, store, slots, null);
        }

        /** The original form: one namespace and model, the file store at {@code root}, 16 slots per rank. */
        @SuppressWarnings("NullAway") // a null store is the record's "file store at root" default
        public Options(@Nullable Path root, String namespace, String model, int prefillWorkers, int decodeWorkers,
                       long totalKvBlocks, int kvCacheBlockSize, long maxNumBatchedTokens, Duration heartbeat,
                       Duration publishInterval, String frontendHost, int frontendPort, int chunks,
                       long chunkDelayMs) {
            this(root, namespace, model, prefillWorkers, decodeWorkers, totalKvBlocks, kvCacheBlockSize,
                    maxNumBatchedTokens, heartbeat, publishInterval, frontendHost, frontendPort, chunks, chunkDelayMs,
                    List.of(), null, 16, null);
        }

        /**
         * 2 prefill + 2 decode workers of {@code model} in namespace {@code dynamo}, rooted at {@code root}; the
         * frontend on an ephemeral loopback port streaming 16 tokens 50 ms apart; 16 slots per rank.
         */
        public static Options defaults(Path root, String model) {
            return new Options(root, "dynamo", model, 2, 2, 8192, 16, 8192, Duration.ofMillis(3333),
                    Duration.ofMillis(200), "127.0.0.1", 0, 16, 50);
        }

        public Options withWorkers(int prefill, int decode) {
            return with(c -> {
                c.prefillWorkers = prefill;
                c.decodeWorkers = decode;
            });
        }

        public Options withHeartbeat(Duration every) {
            return with(c -> c.heartbeat = every);
        }

        public Options withFrontend(String host, int port, int chunks, long chunkDelayMs) {
            return with(c -> {
                c.frontendHost = host;
                c.frontendPort = port;
                c.chunks = chunks;
                c.chunkDelayMs = chunkDelayMs;
            });
        }

        /** Exactly these pools instead of the single-model topology. */
        public Options withPools(List<Pool> list) {
            return with(c -> c.pools = list);
        }

        public Options withStore(Store where) {
            return with(c -> c.store = where);
        }

        public Options withSlots(int perRank) {
            return with(c -> c.slots = perRank);
        }

        public Options withKvCache(long totalBlocks, int blockSize) {
            return with(c -> {
                c.totalKvBlocks = totalBlocks;
                c.kvCacheBlockSize = blockSize;
            });
        }

        public Options withPublishInterval(Duration every) {
            return with(c -> c.publishInterval = every);
        }

        /** Prefix caches, kv-events and the prefill-time model on the prefill and aggregated workers. */
        public Options withKv(@Nullable SimKv settings) {
            return with(c -> c.kv = settings);
        }

        /** A copy with {@code change} applied; the canonical constructor checks the result. */
        private Options with(java.util.function.Consumer<Copy> change) {
            Copy c = new Copy(this);
            change.accept(c);
            return new Options(c.root, c.namespace, c.model, c.prefillWorkers, c.decodeWorkers, c.totalKvBlocks,
                    c.kvCacheBlockSize, c.maxNumBatchedTokens, c.heartbeat, c.publishInterval, c.frontendHost,
                    c.frontendPort, c.chunks, c.chunkDelayMs, c.pools, c.store, c.slots, c.kv);
        }

        /** The fields of an {@link Options} being copied, so that each {@code with...} names only what it changes. */
        private static final class Copy {
            @Nullable Path root;
            String namespace;
            String model;
            int prefillWorkers;
            int decodeWorkers;
            long totalKvBlocks;
            int kvCacheBlockSize;
            long maxNumBatchedTokens;
            Duration heartbeat;
            Duration publishInterval;
            String frontendHost;
            int frontendPort;
            int chunks;
            long chunkDelayMs;
            List<Pool> pools;
            Store store;
            int slots;
            @Nullable SimKv kv;

            Copy(Options o) {
                root = o.root;
                namespace = o.namespace;
                model = o.model;
                prefillWorkers = o.prefillWorkers;
                decodeWorkers = o.decodeWorkers;
                totalKvBlocks = o.totalKvBlocks;
                kvCacheBlockSize = o.kvCacheBlockSize;
                maxNumBatchedTokens = o.maxNumBatchedTokens;
                heartbeat = o.heartbeat;
                publishInterval = o.publishInterval;
                frontendHost = o.frontendHost;
                frontendPort = o.frontendPort;
                chunks = o.chunks;
                chunkDelayMs = o.chunkDelayMs;
                pools = o.pools;
                store = o.store;
                slots = o.slots;
                kv = o.kv;
            }
        }

        /** The pools to run: {@link #pools} or, without them, the single-model topology. */
        public List<Pool> effectivePools() {
            if (!pools.isEmpty()) {
                return pools;
            }
            if (prefillWorkers == 0) {
                return List.of(Pool.of(namespace, model, DirectFrontend.Role.AGGREGATED, decodeWorkers));
            }
            return List.of(Pool.of(namespace, model, DirectFrontend.Role.PREFILL, prefillWorkers),
                    Pool.of(namespace, model, DirectFrontend.Role.DECODE, decodeWorkers));
        }

        private static void check(String name, Object value, boolean ok, String expected) {
            if (!ok) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: " + expected + ")");
            }
        }
    }

    private final Options options;
    private final ZContext zmq;
    private final Registrar registrar;
    private final List<SimWorker> workers;
    private final ScheduledExecutorService owner;
    private final DirectFrontend frontend;
    private final @Nullable KvServing kvServing;
    private final PrefillCounts prefills;
    private volatile boolean closed;
    private boolean publishFailureLogged;

    private SimFleet(Options options, ZContext zmq, Registrar registrar, List<SimWorker> workers,
            ScheduledExecutorService owner, DirectFrontend frontend, @Nullable KvServing kvServing,
            PrefillCounts prefills) {
        this.prefills = prefills;
        this.options = options;
        this.zmq = zmq;
        this.registrar = registrar;
        this.workers = workers;
        this.owner = owner;
        this.frontend = frontend;
        this.kvServing = kvServing;
    }

    /**
     * Opens the store, takes each worker's instance ID from it, binds the publishers and the frontend, registers
     * every worker, then starts publishing and heartbeats. On failure, whatever was started is stopped again.
     */
    public static SimFleet start(Options options) throws Exception {
        ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sim-fleet");
            t.setDaemon(true);
            return t;
        });
        ZContext zmq = new ZContext(1);
        Registrar registrar = null;
        List<SimWorker> workers = List.of();
        DirectFrontend frontend = null;
        KvServing kvServing = null;
        try {
            SimKv kv = options.kv();
            kvServing = kv == null ? null : KvServing.start(kv);
            registrar = Registrar.open(options.store());
            List<Named> named = name(options, registrar);
            // Sockets are created on the owner thread too: it is the only thread that ever touches them.
            PrefillCounts prefills = new PrefillCounts();
            workers = owner.submit(() -> createWorkers(options, named, zmq, owner, prefills)).get();
            frontend = DirectFrontend.start(options.frontendHost(), options.frontendPort(),
                    workers.stream().map(SimWorker::asFrontendWorker).toList(), options.chunks(),
                    options.chunkDelayMs());
            SimFleet fleet = new SimFleet(options, zmq, registrar, workers, owner, frontend, kvServing, prefills);
            frontend.engine(new FleetEngine(workers, kvServing));
            if (kvServing != null) {
                List<WorkerKv> caching = new ArrayList<>();
                for (SimWorker w : workers) {
                    WorkerKv c = w.kv();
                    if (c != null) {
                        caching.add(c);
                    }
                }
                kvServing.fleet(caching);
            }
            registrar.register(fleet.registrations());
            long publishMs = options.publishInterval().toMillis();
            owner.scheduleAtFixedRate(fleet::publishAll, 0, publishMs, TimeUnit.MILLISECONDS);
            long heartbeatMs = options.heartbeat().toMillis();
            owner.scheduleAtFixedRate(fleet::heartbeat, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
            return fleet;
        } catch (Exception | Error e) {
            if (registrar != null) {
                registrar.close();
            }
            if (frontend != null) {
                frontend.close();
            }
            if (kvServing != null) {
                kvServing.close();
            }
            List<SimWorker> opened = workers;
            owner.submit(() -> opened.forEach(SimFleet::closeSockets));
            owner.shutdown();
            owner.awaitTermination(10, TimeUnit.SECONDS);
            zmq.close();
            if (e instanceof java.util.concurrent.ExecutionException x && x.getCause() instanceof Exception c) {
                throw new IllegalStateException("sim fleet: cannot bind the kv_metrics publishers", c);
            }
            throw e;
        }
    }

    /** A worker's name, pool and store-given instance ID, before its sockets exist. */
    private record Named(String name, Pool pool, long instanceId) {
    }

    private static List<Named> name(Options options, Registrar registrar) throws Exception {
        List<Named> out = new ArrayList<>();
        int index = 0;
        for (Pool pool : options.effectivePools()) {
            for (int i = 0; i < pool.workers(); i++) {
                String name = PodNames.dns(pool.namespace(), 24) + "-" + PodNames.dns(pool.component(), 24) + "-"
                        + index++;
                out.add(new Named(name, pool, registrar.instanceId(name)));
            }
        }
        return out;
    }

    private static List<SimWorker> createWorkers(Options options, List<Named> named, ZContext zmq,
            java.util.concurrent.Executor owner, PrefillCounts prefills) {
        List<SimWorker> out = new ArrayList<>();
        SimKv kv = options.kv();
        for (Named n : named) {
            // Only the workers that compute a prompt cache it: prefill and aggregated ones (a decode worker of a
            // disaggregated pool receives its KV by transfer, which is not simulated).
            WorkerKv cache = kv == null || n.pool().role() == DirectFrontend.Role.DECODE ? null
                    : new WorkerKv(zmq, RANDOM.nextLong(), n.instanceId(), n.pool().dpSize(),
                            options.kvCacheBlockSize(), options.totalKvBlocks(), kv, owner, prefills);
            out.add(new SimWorker(n.instanceId(), n.name(), n.pool(), new KvMetricsPublisher(zmq, RANDOM.nextLong()),
                    new WorkerLoad(n.pool().dpSize(), options.slots(), options.kvCacheBlockSize(),
                            options.totalKvBlocks()), cache));
        }
        return List.copyOf(out);
    }

    /** Owner thread only. */
    private static void closeSockets(SimWorker w) {
        w.publisher().close();
        WorkerKv kv = w.kv();
        if (kv != null) {
            kv.close();
        }
    }

    /**
     * Each worker's endpoint, model card and kv_metrics event channel, keyed as in etcd; with a prefix cache also
     * its kv-events event channel, and its card names the tokenizer artifacts.
     */
    private List<Registrar.Registration> registrations() {
        SimKv kv = options.kv();
        String artifacts = kv == null ? null : DynamoJson.tokenizerArtifacts(kv.tokenizerJson(),
                kv.tokenizerConfigJson());
        List<Registrar.Registration> out = new ArrayList<>();
        for (SimWorker w : workers) {
            String hex = Long.toHexString(w.instanceId());
            String base = w.namespace() + "/" + w.component() + "/" + ENDPOINT + "/" + hex;
            List<Registrar.Entry> entries = new ArrayList<>(List.of(
                    new Registrar.Entry("v1/instances", base, DynamoJson.endpoint(w.namespace(), w.component(),
                            ENDPOINT, w.instanceId(), "127.0.0.1:" + frontend.address().getPort() + "/" + hex + "/"
                                    + ENDPOINT)),
                    new Registrar.Entry("v1/mdc", base, DynamoJson.model(w.namespace(), w.component(), ENDPOINT,
                            w.instanceId(), DynamoJson.card(options, w.pool(), artifacts))),
                    eventChannel(w, KvMetricsPublisher.TOPIC, w.publisherId(), w.kvMetricsEndpoint())));
            WorkerKv cache = w.kv();
            if (cache != null && kv != null && kv.publishKvEvents()) {
                entries.add(eventChannel(w, KvEventEncoding.TOPIC, cache.publisherId(), cache.endpoint()));
            }
            out.add(new Registrar.Registration(w, List.copyOf(entries)));
        }
        return out;
    }

    private static Registrar.Entry eventChannel(SimWorker w, String topic, long publisherId, String zmqEndpoint) {
        return new Registrar.Entry("v1/event_channels", eventChannelKey(w.namespace(), w.component(), topic,
                publisherId), DynamoJson.eventChannel(w.namespace(), w.component(), ENDPOINT, topic, publisherId,
                zmqEndpoint));
    }

    /** The later (endpoint-scoped) key: {@code namespace/<ns>/component/<c>/endpoint/<ep>/topic/<t>/<id:x>}. */
    static String eventChannelKey(String namespace, String component, String topic, long publisherId) {
        return "namespace/" + FileStoreWriter.segment(namespace) + "/component/" + FileStoreWriter.segment(component)
                + "/endpoint/" + FileStoreWriter.segment(ENDPOINT) + "/topic/" + FileStoreWriter.segment(topic) + "/"
                + Long.toHexString(publisherId);
    }

    private void heartbeat() {
        if (!closed) {
            registrar.heartbeat();
        }
    }

    private void publishAll() {
        if (closed) {
            return;
        }
        long now = kvServing == null ? System.nanoTime() : kvServing.now();
        for (SimWorker w : workers) {
            try {
                w.publish(now);
            } catch (RuntimeException | AssertionError e) {
                // One socket's trouble must not cancel the schedule (a thrown task is never run again); JeroMQ
                // reports some internal faults as AssertionError when assertions are on.
                if (!publishFailureLogged) {
                    publishFailureLogged = true;
                    LOG.log(System.Logger.Level.WARNING, "sim fleet: publishing a kv_metrics sample failed", e);
                }
            }
        }
    }

    public List<SimWorker> workers() {
        return workers;
    }

    public DirectFrontend frontend() {
        return frontend;
    }

    /**
     * The BLAKE3 checksums ({@code blake3:<hex>}) of the tokenizer artifacts the cards name, for a router's
     * {@code dynamo.kv.pinned_artifacts}; empty without prefix caches.
     */
    public List<String> kvArtifactChecksums() {
        SimKv kv = options.kv();
        if (kv == null) {
            return List.of();
        }
        Path config = kv.tokenizerConfigJson();
        return config == null ? List.of(Blake3.checksum(kv.tokenizerJson()))
                : List.of(Blake3.checksum(kv.tokenizerJson()), Blake3.checksum(config));
    }

    /** How many times each block was prefilled across the fleet (with {@link SimKv} on; empty otherwise). */
    public PrefillCounts prefillCounts() {
        return prefills;
    }

    /**
     * The simulator's avoidable prefill tokens request by request, keyed by the router's decision id
     * (docs/simulator.md), when the workers keep prefix caches.
     */
    public Optional<AvoidableTokens> avoidableTokens() {
        return kvServing == null ? Optional.empty() : Optional.of(kvServing.avoidable());
    }

    /** The KV serving path (tokenizer, clock), when the workers keep prefix caches. */
    @Nullable KvServing kvServing() {
        return kvServing;
    }

    /** {@code http://host:port} of the direct-mode frontend. */
    public String frontendUrl() {
        return "http://" + options.frontendHost() + ":" + frontend.address().getPort();
    }

    public Options options() {
        return options;
    }

    /** The worker at {@code index} in {@link #workers()} (as {@link #describe()} numbers them). */
    public SimWorker worker(int index) {
        return workers.get(index);
    }

    /** A one-line description per worker, numbered, for a console. */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            SimWorker w = workers.get(i);
            out.add(String.format(Locale.ROOT, "#%-3d %-24s %-10s %-10s dp=%d %20s (%s) model %s kv_metrics %s", i,
                    w.name(), w.namespace(), w.component(), w.dpSize(), Long.toUnsignedString(w.instanceId()),
                    Long.toHexString(w.instanceId()), w.model(), w.kvMetricsEndpoint()));
        }
        return out;
    }

    /** Deletes the registrations first (so readers see the workers leave), then stops the frontend and sockets. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        registrar.close();
        try {
            owner.submit(() -> workers.forEach(SimFleet::closeSockets)).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        } finally {
            owner.shutdownNow();
            frontend.close();
            if (kvServing != null) {
                kvServing.close();
            }
            zmq.close();
        }
    }
}
