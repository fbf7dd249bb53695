package dev.continuum.router.core.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class CidrTest {

    @Test
    void matchesByPrefix() throws Exception {
        Cidr ten = Cidr.parse("10.0.0.0/8");
        assertThat(ten.contains(InetAddress.getByName("10.200.3.4"))).isTrue();
        assertThat(ten.contains(InetAddress.getByName("11.0.0.1"))).isFalse();
        assertThat(ten.contains(InetAddress.getByName("::1"))).isFalse();
        Cidr odd = Cidr.parse("192.168.1.128/25");
        assertThat(odd.contains(InetAddress.getByName("192.168.1.200"))).isTrue();
        assertThat(odd.contains(InetAddress.getByName("192.168.1.100"))).isFalse();
        assertThat(Cidr.parse("127.0.0.1").contains(InetAddress.getByName("127.0.0.1"))).isTrue();
        assertThat(Cidr.parse("fd00::/8").contains(InetAddress.getByName("fd12::1"))).isTrue();
        assertThat(Cidr.parse("0.0.0.0/0").contains(InetAddress.getByName("8.8.8.8"))).isTrue();
    }

    @Test
    void refusesHostNamesAndBadPrefixes() {
        assertThatThrownBy(() -> Cidr.parse("example.com")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Cidr.parse("10.0.0.0/33")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Cidr.parse("10.0.0.0/x")).isInstanceOf(IllegalArgumentException.class);
    }
}
