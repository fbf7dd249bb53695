package dev.continuum.router.eventplane.zmtp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DirectTcpConnectorTest {
    private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    private final List<InetAddress> accepted = new CopyOnWriteArrayList<>();
    private final ServerSocket server;
    private final AtomicInteger resolutions = new AtomicInteger();

    DirectTcpConnectorTest() throws Exception {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
        Thread t = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    accepted.add(s.getLocalAddress());
                } catch (Exception e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        server.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    private DirectTcpConnector connector(List<String> cidrs, String... resolvesTo) {
        return DirectTcpConnector.builder().policy(CidrPolicy.of(cidrs)).resolver(host -> {
            resolutions.incrementAndGet();
            InetAddress[] out = new InetAddress[resolvesTo.length];
            for (int i = 0; i < out.length; i++) {
                out[i] = InetAddress.getByName(resolvesTo[i]); // literals: no lookup
            }
            return out;
        }).build();
    }

    private ZmtpTarget target() {
        return new ZmtpTarget("dynamo", new ZmtpEndpoint("worker-0.dynamo.svc", server.getLocalPort()), "kv_metrics");
    }

    @Test
    void neverDialsAResolvedAddressOutsideTheAllowList() {
        try (DirectTcpConnector c = connector(List.of("10.0.0.0/8", "fd00::/8"), "127.0.0.1", "::1")) {
            assertThatThrownBy(() -> c.connect(target(), group.next(), new ChannelInboundHandlerAdapter()).get())
                    .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RefusedAddressException.class)
                    .hasMessageNotContaining("127.0.0.1").hasMessageNotContaining("worker-0");
        }
        assertThat(accepted).isEmpty();
        assertThat(resolutions).hasValue(1);
    }

    @Test
    void resolvesOnceAndDialsOnlyTheFirstAllowedResolvedAddress() throws Exception {
        try (DirectTcpConnector c = connector(List.of("127.0.0.2/32"), "127.0.0.1", "127.0.0.2")) {
            Channel ch = c.connect(target(), group.next(), new ChannelInboundHandlerAdapter()).get(10, TimeUnit.SECONDS);
            ch.close().sync();
        }
        org.awaitility.Awaitility.await().until(() -> !accepted.isEmpty());
        assertThat(accepted).containsExactly(InetAddress.getByName("127.0.0.2"));
        assertThat(resolutions).hasValue(1);
    }

    @Test
    void allowsAnyAddressWhenTheListIsUnset() throws Exception {
        try (DirectTcpConnector c = DirectTcpConnector.builder().build()) {
            Channel ch = c.connect(new ZmtpTarget("dynamo", new ZmtpEndpoint("127.0.0.1", server.getLocalPort()),
                    "kv_metrics"), group.next(), new ChannelInboundHandlerAdapter()).get(10, TimeUnit.SECONDS);
            ch.close().sync();
        }
        // The test server closes each connection right after accepting it, so count accepts, not live channels.
        org.awaitility.Awaitility.await().until(() -> !accepted.isEmpty());
        assertThat(accepted).containsExactly(InetAddress.getByName("127.0.0.1"));
    }

    @Test
    void parsesTcpEndpointsWithoutLookingThemUpAndNeverPrintsThem() {
        assertThat(ZmtpEndpoint.parse("tcp://10.0.0.7:41000")).contains(new ZmtpEndpoint("10.0.0.7", 41000));
        assertThat(ZmtpEndpoint.parse("tcp://[fd00::7]:41000")).contains(new ZmtpEndpoint("fd00::7", 41000));
        assertThat(ZmtpEndpoint.parse("tcp://worker-0:1")).contains(new ZmtpEndpoint("worker-0", 1));
        assertThat(ZmtpEndpoint.parse("tcp://10.0.0.7")).isEmpty();
        assertThat(ZmtpEndpoint.parse("tcp://10.0.0.7:0")).isEmpty();
        assertThat(ZmtpEndpoint.parse("tcp://10.0.0.7:65536")).isEmpty();
        assertThat(ZmtpEndpoint.parse("udp://10.0.0.7:1")).isEmpty();
        assertThat(ZmtpEndpoint.parse("tcp://user@h:1")).isEmpty();
        assertThat(new ZmtpEndpoint("10.0.0.7", 1).toString()).doesNotContain("10.0.0.7");
    }

    @Test
    void matchesIpv4AndIpv6NetworksAndRefusesHostNamesAsCidrs() throws Exception {
        CidrPolicy p = CidrPolicy.of(List.of("10.0.0.0/8", "fd00::/8"));
        assertThat(p.allows(InetAddress.getByName("10.1.2.3"))).isTrue();
        assertThat(p.allows(InetAddress.getByName("11.0.0.1"))).isFalse();
        assertThat(p.allows(InetAddress.getByName("fd12::1"))).isTrue();
        assertThat(p.allows(InetAddress.getByName("fe80::1"))).isFalse();
        assertThatThrownBy(() -> CidrPolicy.of(List.of("cafe"))).isInstanceOf(IllegalArgumentException.class);
    }
}
