package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code fleet} command line: the old flags still build the old fleet; stores, pools and scripts parse. */
class SimMainTest {
    private static SimMain.FleetArgs parse(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "fleet";
        System.arraycopy(args, 0, all, 1, args.length);
        return SimMain.parseFleet(all);
    }

    @Test
    void theOriginalFlagsStillDescribeOneModelInTheFileStore() {
        SimFleet.Options o = parse("--root", "store", "--namespace", "ns", "--model", "m", "--prefill", "1",
                "--decode", "3", "--port", "0", "--chunks", "4", "--chunk-delay-ms", "7").options();
        assertThat(o.store()).isEqualTo(new Store.File(Path.of("store")));
        assertThat(o.effectivePools()).containsExactly(Pool.of("ns", "m", DirectFrontend.Role.PREFILL, 1),
                Pool.of("ns", "m", DirectFrontend.Role.DECODE, 3));
        assertThat(o.chunks()).isEqualTo(4);
        assertThat(o.chunkDelayMs()).isEqualTo(7);
    }

    @Test
    void storesPoolsDpAndTheScript() {
        SimMain.FleetArgs etcd = parse("--etcd", "http://a:2379, http://b:2379", "--dp", "4", "--prefill", "0",
                "--slots", "3", "--silence", "1@5", "--stall", "0@2.5+10");
        assertThat(etcd.options().store()).isEqualTo(new Store.Etcd(List.of("http://a:2379", "http://b:2379")));
        assertThat(etcd.options().effectivePools()).containsExactly(
                Pool.of("dynamo", "demo-model", DirectFrontend.Role.AGGREGATED, 2).withDp(4));
        assertThat(etcd.options().slots()).isEqualTo(3);
        assertThat(etcd.script()).containsExactly(
                new Misbehaviour(Misbehaviour.Kind.SILENCE, 1, Duration.ofSeconds(5), null),
                new Misbehaviour(Misbehaviour.Kind.STALL, 0, Duration.ofMillis(2500), Duration.ofSeconds(10)));

        SimFleet.Options k8s = parse("--kubernetes", "dynamo-system", "--k8s-objects", "all",
                "--pool", "namespace=a,model=Qwen/Qwen3-0.6B,role=prefill,workers=2",
                "--pool", "model=llama,role=aggregated,dp=2,component=llama").options();
        assertThat(k8s.store()).isInstanceOfSatisfying(Store.Kubernetes.class, k -> {
            assertThat(k.namespace()).isEqualTo("dynamo-system");
            assertThat(k.objects()).isEqualTo(Store.KubernetesObjects.ALL);
        });
        assertThat(k8s.effectivePools()).containsExactly(
                new Pool("a", "Qwen/Qwen3-0.6B", DirectFrontend.Role.PREFILL, 2, 1, "prefill"),
                new Pool("dynamo", "llama", DirectFrontend.Role.AGGREGATED, 1, 2, "llama"));
    }

    @Test
    void refusesNoStoreTwoStoresAndBadSpecs() {
        assertThatThrownBy(() -> parse("--model", "m")).hasMessageContaining("--root");
        assertThatThrownBy(() -> parse("--root", "x", "--etcd", "http://a:2379")).hasMessageContaining("exactly one");
        assertThatThrownBy(() -> parse("--root", "x", "--stall", "2")).hasMessageContaining("W@T");
        assertThatThrownBy(() -> parse("--root", "x", "--pool", "role=decode")).hasMessageContaining("model=");
    }
}
