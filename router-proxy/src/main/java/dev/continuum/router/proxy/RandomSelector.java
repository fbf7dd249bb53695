package dev.continuum.router.proxy;

import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/** {@code Random}: uniform over the candidates; the thread's own generator, so no shared state at all. */
final class RandomSelector implements BackendSelector {
    @Override
    public Backend pick(List<Backend> candidates) {
        return candidates.get(ThreadLocalRandom.current().nextInt(candidates.size()));
    }
}
