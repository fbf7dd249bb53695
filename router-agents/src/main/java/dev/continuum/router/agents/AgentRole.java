package dev.continuum.router.agents;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import java.util.List;
import java.util.function.Function;

/**
 * What differs between the two agents that share {@link BrokerAgent}'s session code: what {@code hello} declares
 * and which upstream a {@code subscribe} target may reach (docs/event-bus-protocol.md, section 4).
 */
public interface AgentRole {
    /** Adds the role and what it declares ({@code dynamo_namespaces} or {@code sources}) to {@code hello}. */
    public void describe(ObjectNode hello);

    /** The upstream to relay for a {@code subscribe}'s {@code target}, or the reason to refuse it. */
    public Choice choose(JsonNode target);

    /** The answer to a {@code subscribe}. */
    public sealed interface Choice permits Upstream, Refusal {
    }

    /**
     * Dial {@code host:port} and relay what the upstream sends.
     *
     * @param handlers the handlers that sit between the socket and the relay (none for raw ZMTP bytes); a fresh
     *                 list per connection, since Netty handlers are not shared. An {@link io.netty.handler.ssl.SslHandler}
     *                 among them makes the relay open its data stream only once the handshake succeeded.
     */
    public record Upstream(String host, int port, Function<Channel, List<ChannelHandler>> handlers) implements Choice {
    }

    /** Answer {@code stream_closed} with this code. */
    public record Refusal(String code, String message) implements Choice {
    }
}
