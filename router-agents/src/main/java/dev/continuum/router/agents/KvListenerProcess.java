package dev.continuum.router.agents;

import dev.continuum.router.core.config.Problem;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code continuum-router kv-listener --config FILE}: the in-cluster kv-listener as its own process. It dials out
 * to the router's bus with the {@code kv_listener} role, announces its backends, relays each one's SSE KV-event
 * stream when the router subscribes (resuming after the router's {@code last_event_id}), and on SIGTERM drains:
 * it sends {@code draining}, lets the router move its streams to another kv-listener, then exits. It shares the
 * event broker's session code ({@link BrokerAgent}) and differs only in its role ({@link KvListenerRole}).
 */
public final class KvListenerProcess implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KvListenerProcess.class);

    private final BrokerAgent agent;
    private final CountDownLatch stopped = new CountDownLatch(1);

    private KvListenerProcess(BrokerAgent agent) {
        this.agent = agent;
    }

    /** Validates the file and runs until SIGTERM or SIGINT; the exit code (1 for a bad file or a failed start). */
    public static int run(Path configFile, PrintStream err, Map<String, String> environment) {
        KvListenerConfig.Result loaded = KvListenerConfig.load(configFile, environment);
        for (Problem p : loaded.problems()) {
            err.println(p);
        }
        KvListenerConfig config = loaded.config();
        if (config == null) {
            err.println("continuum-router kv-listener: the configuration is invalid; nothing was started");
            return 1;
        }
        KvListenerProcess process;
        try {
            process = start(config);
        } catch (RuntimeException e) {
            err.println("continuum-router kv-listener: failed to start: " + e.getMessage());
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(process::close, "continuum-kv-listener-shutdown"));
        try {
            process.stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    public static KvListenerProcess start(KvListenerConfig config) {
        BrokerAgent agent = new BrokerAgent(config.agent(), new KvListenerRole(config.sources(), config.trust()));
        agent.start().join();
        LOG.info("kv-listener {} announcing backends {} to {}:{}", config.agent().clientId(),
                config.sources().keySet(), config.agent().host(), config.agent().port());
        return new KvListenerProcess(agent);
    }

    public BrokerAgent agent() {
        return agent;
    }

    /** Drains (the agent's stop sends {@code draining} and waits for the router), then exits. */
    @Override
    public void close() {
        LOG.info("kv-listener stopping: draining its streams to other kv-listeners");
        agent.stop().join();
        LOG.info("kv-listener stopped");
        stopped.countDown();
    }
}
