package dev.continuum.router.agents;

import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.BusFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** Agents dialling a {@link BusFixture}'s listener, for the agent tests. */
final class AgentFixture {
    private AgentFixture() {
    }

    /**
     * Starts an agent of {@code role} that dials {@code fixture}'s listener with {@code token} as {@code clientId}
     * declaring {@code namespaces}; it is stopped with what {@link BusFixture#closeAll} closes. With
     * {@code awaitWelcome}, returns once the listener welcomed its session.
     */
    static BrokerAgent agent(BusFixture fixture, String token, String clientId, List<String> namespaces,
            Function<AgentSettings, AgentRole> role, boolean awaitWelcome, List<AutoCloseable> opened) {
        AgentSettings settings = new AgentSettings("127.0.0.1", fixture.listener.localAddress().getPort(), token,
                null, null, fixture.certs.caCert(), clientId, namespaces, AgentSettings.CONNECT_BUDGET,
                Duration.ofSeconds(5));
        BrokerAgent agent = new BrokerAgent(settings, role.apply(settings));
        agent.start().join();
        opened.add(() -> agent.stop().orTimeout(20, TimeUnit.SECONDS).join());
        if (awaitWelcome) {
            await().atMost(Duration.ofSeconds(10)).until(() -> agent.sessionId() != null);
        }
        return agent;
    }
}
