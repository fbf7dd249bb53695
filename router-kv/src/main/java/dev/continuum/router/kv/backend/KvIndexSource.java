package dev.continuum.router.kv.backend;

import dev.continuum.router.kv.backend.config.KvCacheIndexConfig;

/** One running {@code dynamo.kv_cache_index} source, whatever its transport, as the supervisor drives it. */
public interface KvIndexSource {
    KvCacheIndexConfig.Source source();

    /** Its admin row; takes no lock. */
    KvSourceView view();

    void start();

    /** Closes its streams and forgets what its backend held. */
    void stop();
}
