package dev.continuum.router.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Properties;
import org.junit.jupiter.api.Test;

class NettyDefaultsTest {
    @Test
    void fillsWhatTheOperatorLeftUnset() {
        Properties p = new Properties();
        NettyDefaults.applyUnlessSet(p);
        assertThat(p).containsEntry("io.netty.leakDetection.level", "disabled")
                .containsEntry("io.netty.allocator.type", "pooled");
    }

    @Test
    void neverOverridesAnOperatorsFlag() {
        Properties p = new Properties();
        p.setProperty("io.netty.leakDetection.level", "paranoid");
        NettyDefaults.applyUnlessSet(p);
        assertThat(p).containsEntry("io.netty.leakDetection.level", "paranoid")
                .containsEntry("io.netty.allocator.type", "pooled");
    }
}
