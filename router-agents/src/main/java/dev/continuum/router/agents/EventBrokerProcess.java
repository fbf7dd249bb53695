package dev.continuum.router.agents;

import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.lifecycle.LifecycleStack;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.watch.DiscoverySupervisor;
import dev.continuum.router.eventplane.zmtp.ZmtpEndpoint;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code continuum-router event-broker --config FILE}: the in-cluster event broker as its own process. It reads
 * DynamoWorkerMetadata with the router's own Kubernetes discovery source (get, list and watch only), runs a
 * {@link BrokerAgent} that relays only the publishers that metadata advertises, and on SIGTERM drains: it sends
 * {@code draining}, lets the router move its streams to other brokers, then ends the session and exits.
 */
public final class EventBrokerProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EventBrokerProcess.class);

    private final LifecycleStack stack;
    private final BrokerAgent agent;
    private final CountDownLatch stopped = new CountDownLatch(1);

    private EventBrokerProcess(LifecycleStack stack, BrokerAgent agent) {
        this.stack = stack;
        this.agent = agent;
    }

    /** Validates the file and runs until SIGTERM or SIGINT; the exit code (1 for a bad file or a failed start). */
    public static int run(Path configFile, PrintStream err, Map<String, String> environment) {
        EventBrokerConfig.Result loaded = EventBrokerConfig.load(configFile, environment);
        for (Problem p : loaded.problems()) {
            err.println(p);
        }
        EventBrokerConfig config = loaded.config();
        if (config == null) {
            err.println("continuum-router event-broker: the configuration is invalid; nothing was started");
            return 1;
        }
        EventBrokerProcess process;
        try {
            process = start(config);
        } catch (RuntimeException e) {
            err.println("continuum-router event-broker: failed to start: " + e.getMessage());
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(process::close, "continuum-broker-shutdown"));
        try {
            process.stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** Starts discovery, then the agent; both stop through one stack, the agent (and its drain) first. */
    public static EventBrokerProcess start(EventBrokerConfig config) {
        LifecycleStack stack = new LifecycleStack();
        try {
            DiscoverySupervisor discovery = DiscoverySupervisor.builder().meterRegistry(new SimpleMeterRegistry())
                    .build();
            discovery.reload(true, config.discovery());
            stack.push(discovery);
            BrokerAgent agent = stack.push(new BrokerAgent(config.agent(),
                    advertisedBy(discovery.registry(), config.agent().namespaces())));
            LOG.info("event broker {} relaying Dynamo namespaces {} to {}:{}", config.agent().clientId(),
                    config.agent().namespaces(), config.agent().host(), config.agent().port());
            return new EventBrokerProcess(stack, agent);
        } catch (RuntimeException | Error e) {
            stack.stopAll().join();
            throw e;
        }
    }

    /** A target is advertised when a publisher of the fleet view, in a declared namespace, has that endpoint. */
    public static AdvertisedTargets advertisedBy(DynamoRegistry registry, List<String> namespaces) {
        return (namespace, host, port) -> {
            if (!namespaces.contains(namespace)) {
                return false;
            }
            for (DynamoPublisher p : registry.snapshot().publishers()) {
                if (p.namespace().equals(namespace)) {
                    var endpoint = ZmtpEndpoint.parse(p.address());
                    if (endpoint.isPresent() && endpoint.get().host().equals(host) && endpoint.get().port() == port) {
                        return true;
                    }
                }
            }
            return false;
        };
    }

    public BrokerAgent agent() {
        return agent;
    }

    /** Drains (the agent's stop sends {@code draining} and waits for the router), then stops discovery. */
    @Override
    public void close() {
        LOG.info("event broker stopping: draining its streams to other brokers");
        stack.stopAll().join();
        LOG.info("event broker stopped");
        stopped.countDown();
    }
}
