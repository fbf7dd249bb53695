package dev.continuum.router.sim;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.zeromq.ZContext;

/**
 * A simulated Dynamo fleet on this machine: workers of one model in one namespace, registered in Dynamo's file
 * store as Dynamo processes register (endpoint, model card, kv_metrics event channel), each publishing its
 * {@code ActiveLoad} over its own ZMQ PUB socket, behind a direct-mode frontend ({@link DirectFrontend}) that
 * serves the requests pinned to them and reports each request's start and end so their load moves.
 *
 * <p>One daemon thread owns every ZMQ socket: it publishes every {@link Options#publishInterval}, touches the
 * files every {@link Options#heartbeat} (so a reader's mtime TTL keeps them live) and closes the sockets on
 * {@link #close}, which also deletes the files.
 */
public final class SimFleet implements AutoCloseable {
    static final String ENDPOINT = "generate";
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(SimFleet.class.getName());

    /**
     * What to simulate. With {@code prefillWorkers == 0} the decode workers are aggregated workers (component
     * {@code backend}); otherwise they are decode workers behind a prefill pool (components {@code prefill} and
     * {@code decode}).
     */
    public record Options(Path root, String namespace, String model, int prefillWorkers, int decodeWorkers,
                          long totalKvBlocks, int kvCacheBlockSize, long maxNumBatchedTokens, Duration heartbeat,
                          Duration publishInterval, String frontendHost, int frontendPort, int chunks,
                          long chunkDelayMs) {
        public Options {
            check("prefillWorkers", prefillWorkers, prefillWorkers >= 0, ">= 0");
            check("decodeWorkers", decodeWorkers, decodeWorkers >= 1, ">= 1");
            check("totalKvBlocks", totalKvBlocks, totalKvBlocks >= 1, ">= 1");
            check("kvCacheBlockSize", kvCacheBlockSize, kvCacheBlockSize >= 1, ">= 1");
            check("maxNumBatchedTokens", maxNumBatchedTokens, maxNumBatchedTokens >= 1, ">= 1");
            check("heartbeat", heartbeat, heartbeat.toMillis() >= 10, ">= 10ms");
            check("publishInterval", publishInterval, publishInterval.toMillis() >= 10, ">= 10ms");
        }

        /**
         * 2 prefill + 2 decode workers of {@code model} in namespace {@code dynamo}, rooted at {@code root}; the
         * frontend on an ephemeral loopback port streaming 16 tokens 50 ms apart.
         */
        public static Options defaults(Path root, String model) {
            return new Options(root, "dynamo", model, 2, 2, 8192, 16, 8192, Duration.ofMillis(3333),
                    Duration.ofMillis(200), "127.0.0.1", 0, 16, 50);
        }

        public Options withWorkers(int prefill, int decode) {
            return new Options(root, namespace, model, prefill, decode, totalKvBlocks, kvCacheBlockSize,
                    maxNumBatchedTokens, heartbeat, publishInterval, frontendHost, frontendPort, chunks, chunkDelayMs);
        }

        public Options withHeartbeat(Duration every) {
            return new Options(root, namespace, model, prefillWorkers, decodeWorkers, totalKvBlocks, kvCacheBlockSize,
                    maxNumBatchedTokens, every, publishInterval, frontendHost, frontendPort, chunks, chunkDelayMs);
        }

        public Options withFrontend(String host, int port, int chunks, long chunkDelayMs) {
            return new Options(root, namespace, model, prefillWorkers, decodeWorkers, totalKvBlocks, kvCacheBlockSize,
                    maxNumBatchedTokens, heartbeat, publishInterval, host, port, chunks, chunkDelayMs);
        }

        private static void check(String name, Object value, boolean ok, String expected) {
            if (!ok) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: " + expected + ")");
            }
        }
    }

    private final Options options;
    private final ZContext zmq;
    private final FileStoreWriter store;
    private final List<SimWorker> workers;
    private final ScheduledExecutorService owner;
    private final DirectFrontend frontend;
    private volatile boolean closed;
    private boolean publishFailureLogged;

    private SimFleet(Options options, ZContext zmq, List<SimWorker> workers, ScheduledExecutorService owner,
            DirectFrontend frontend) {
        this.options = options;
        this.zmq = zmq;
        this.store = new FileStoreWriter(options.root());
        this.workers = workers;
        this.owner = owner;
        this.frontend = frontend;
    }

    /** Binds the publishers and the frontend, registers every worker, then starts publishing and heartbeats. */
    public static SimFleet start(Options options) throws InterruptedException {
        ScheduledExecutorService owner = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sim-fleet");
            t.setDaemon(true);
            return t;
        });
        ZContext zmq = new ZContext(1);
        List<SimWorker> workers;
        try {
            // Sockets are created on the owner thread too: it is the only thread that ever touches them.
            workers = owner.submit(() -> createWorkers(options, zmq)).get();
        } catch (java.util.concurrent.ExecutionException e) {
            owner.shutdownNow();
            zmq.close();
            throw new IllegalStateException("sim fleet: cannot bind the kv_metrics publishers", e.getCause());
        }
        DirectFrontend frontend = DirectFrontend.start(options.frontendHost(), options.frontendPort(),
                workers.stream().map(SimWorker::asFrontendWorker).toList(), options.chunks(), options.chunkDelayMs());
        SimFleet fleet = new SimFleet(options, zmq, workers, owner, frontend);
        Map<Long, SimWorker> byId = workers.stream()
                .collect(Collectors.toUnmodifiableMap(SimWorker::instanceId, Function.identity()));
        frontend.inFlight(new DirectFrontend.InFlight() {
            @Override
            public void started(long instanceId) {
                SimWorker w = byId.get(instanceId);
                if (w != null) {
                    w.started();
                }
            }

            @Override
            public void finished(long instanceId) {
                SimWorker w = byId.get(instanceId);
                if (w != null) {
                    w.finished();
                }
            }
        });
        fleet.register();
        long publishMs = options.publishInterval().toMillis();
        owner.scheduleAtFixedRate(fleet::publishAll, 0, publishMs, TimeUnit.MILLISECONDS);
        long heartbeatMs = options.heartbeat().toMillis();
        owner.scheduleAtFixedRate(fleet.store::touchAll, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
        return fleet;
    }

    private static List<SimWorker> createWorkers(Options options, ZContext zmq) {
        List<SimWorker> out = new ArrayList<>();
        boolean disaggregated = options.prefillWorkers() > 0;
        for (int i = 0; i < options.prefillWorkers(); i++) {
            out.add(new SimWorker(RANDOM.nextLong(), DirectFrontend.Role.PREFILL, "prefill",
                    new KvMetricsPublisher(zmq, RANDOM.nextLong())));
        }
        for (int i = 0; i < options.decodeWorkers(); i++) {
            out.add(disaggregated
                    ? new SimWorker(RANDOM.nextLong(), DirectFrontend.Role.DECODE, "decode",
                            new KvMetricsPublisher(zmq, RANDOM.nextLong()))
                    : new SimWorker(RANDOM.nextLong(), DirectFrontend.Role.AGGREGATED, "backend",
                            new KvMetricsPublisher(zmq, RANDOM.nextLong())));
        }
        return List.copyOf(out);
    }

    private void register() {
        for (SimWorker w : workers) {
            String hex = Long.toHexString(w.instanceId());
            String base = options.namespace() + "/" + w.component() + "/" + ENDPOINT + "/" + hex;
            store.put("v1/instances", base, DynamoJson.endpoint(options.namespace(), w.component(), ENDPOINT,
                    w.instanceId(), "127.0.0.1:" + frontend.address().getPort() + "/" + hex + "/" + ENDPOINT));
            store.put("v1/mdc", base, DynamoJson.model(options.namespace(), w.component(), ENDPOINT, w.instanceId(),
                    DynamoJson.card(options, w.role())));
            store.put("v1/event_channels", eventChannelKey(options.namespace(), w.component(), w.publisherId()),
                    DynamoJson.eventChannel(options.namespace(), w.component(), ENDPOINT, w.publisherId(),
                            w.kvMetricsEndpoint()));
        }
    }

    /** The later (endpoint-scoped) key: {@code namespace/<ns>/component/<c>/endpoint/<ep>/topic/<t>/<id:x>}. */
    static String eventChannelKey(String namespace, String component, long publisherId) {
        return "namespace/" + FileStoreWriter.segment(namespace) + "/component/" + FileStoreWriter.segment(component)
                + "/endpoint/" + FileStoreWriter.segment(ENDPOINT) + "/topic/" + KvMetricsPublisher.TOPIC + "/"
                + Long.toHexString(publisherId);
    }

    private void publishAll() {
        if (closed) {
            return;
        }
        for (SimWorker w : workers) {
            try {
                w.publish();
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

    /** {@code http://host:port} of the direct-mode frontend. */
    public String frontendUrl() {
        return "http://" + options.frontendHost() + ":" + frontend.address().getPort();
    }

    public Options options() {
        return options;
    }

    /** A one-line description per worker, for a console. */
    public List<String> describe() {
        return workers.stream().map(w -> String.format(Locale.ROOT, "%-8s %20s (%s) kv_metrics %s",
                w.component(), Long.toUnsignedString(w.instanceId()), Long.toHexString(w.instanceId()),
                w.kvMetricsEndpoint())).toList();
    }

    /** Deletes the registrations first (so readers see the workers leave), then stops the frontend and sockets. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            owner.submit(() -> {
                store.removeAll();
                workers.forEach(w -> w.publisher().close());
            }).get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            store.removeAll();
        } finally {
            owner.shutdownNow();
            frontend.close();
            zmq.close();
        }
    }
}
