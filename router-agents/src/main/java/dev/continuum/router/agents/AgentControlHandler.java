package dev.continuum.router.agents;

import dev.continuum.router.eventbus.BusProtocol;
import dev.continuum.router.eventbus.ControlJson;
import dev.continuum.router.eventbus.Hello;
import dev.continuum.router.eventbus.LineBuffer;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The agent's side of the control stream: the router's answer (200 and {@code welcome}, or a refusal), then its
 * commands, heartbeats and closing trailer. Lines are bounded like the router's. Releases every frame.
 */
public final class AgentControlHandler extends ChannelInboundHandlerAdapter {
    private final BrokerAgent agent;
    private final LineBuffer lines = new LineBuffer();
    private boolean accepted;
    private final StringBuilder refusal = new StringBuilder();

    public AgentControlHandler(BrokerAgent agent) {
        this.agent = agent;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof Http2HeadersFrame headers) {
                CharSequence status = headers.headers().status();
                if (status != null) {
                    accepted = "200".contentEquals(status);
                } else {
                    CharSequence close = headers.headers().get(BusProtocol.CLOSE_TRAILER);
                    agent.refused(close == null ? "closed" : close.toString());
                }
            } else if (msg instanceof Http2DataFrame data) {
                if (!accepted) {
                    if (refusal.length() < 1024) {
                        refusal.append(data.content().toString(StandardCharsets.UTF_8));
                    }
                    if (data.isEndStream()) {
                        agent.refused(refusal.toString());
                    }
                    return;
                }
                List<byte[]> read;
                try {
                    read = lines.feed(data.content());
                } catch (LineBuffer.TooLong e) {
                    agent.refused("a control line over the limit");
                    return;
                }
                for (byte[] line : read) {
                    handle(line);
                }
            } else if (msg instanceof Http2ResetFrame) {
                agent.refused("reset");
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void handle(byte[] line) {
        ObjectNode m = ControlJson.parseObject(line);
        if (m == null) {
            return;
        }
        String type = Hello.text(m.get("type"));
        switch (type == null ? "" : type) {
            case "welcome" -> {
                String id = Hello.text(m.get("session_id"));
                if (id != null) {
                    agent.welcomed(id);
                }
            }
            case "heartbeat" -> {
                ObjectNode ack = ControlJson.object("heartbeat_ack");
                ack.put("seq", m.path("seq").asLong());
                agent.send(ack);
            }
            case "subscribe" -> subscribe(m);
            case "unsubscribe" -> {
                String id = Hello.text(m.get("stream_id"));
                if (id != null) {
                    agent.unsubscribe(id);
                }
            }
            default -> {
                // heartbeat_ack and message types of later versions: nothing to do
            }
        }
    }

    private void subscribe(ObjectNode m) {
        String id = Hello.text(m.get("stream_id"));
        if (id == null || !BusProtocol.STREAM_ID.matcher(id).matches()) {
            return;
        }
        agent.subscribe(id, m.path("target"));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        agent.refused("control stream closed");
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
