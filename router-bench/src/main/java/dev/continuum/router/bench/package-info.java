/**
 * JMH benchmarks of the router's hot paths, one class per path. Built only with the Maven profile
 * {@code bench}; the command and the recorded results are in docs/benchmarks.md ("JMH hot paths").
 * Inputs are built in {@code @Setup} from upstream's wire shapes (docs/decisions.md); only public API of the
 * router modules is used, plus the one seam {@code RequestBodyInspection} of router-core.
 *
 * <p>Beside them, measured programs with a {@code main} (run with {@code java -cp benchmarks.jar CLASS}):
 * {@code DiscoveryBenchmark}, {@code KubernetesBenchmark}, {@code LoadSignalsBenchmark} (with its child-JVM
 * peers {@code BenchPeers}) and {@code PickerRounds}, for what JMH does not fit: a real etcd or Kubernetes
 * mock server, heap and socket storms across processes, cold starts.
 */
@NullMarked
package dev.continuum.router.bench;

import org.jspecify.annotations.NullMarked;
