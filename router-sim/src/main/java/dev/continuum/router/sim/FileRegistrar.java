package dev.continuum.router.sim;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;

/**
 * The file store (ai-dynamo/dynamo lib/runtime/src/storage/kv/file.rs): a random u64 instance ID per worker (a
 * file-store process picks one at start-up), atomic writes, mtime keep-alives on each heartbeat, files deleted on
 * close.
 */
final class FileRegistrar implements Registrar {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final FileStoreWriter store;

    FileRegistrar(Path root) {
        this.store = new FileStoreWriter(root);
    }

    @Override
    public long instanceId(String workerName) {
        return RANDOM.nextLong();
    }

    @Override
    public void register(List<Registration> workers) {
        for (Registration r : workers) {
            for (Entry e : r.entries()) {
                store.put(e.bucket(), e.key(), e.json());
            }
        }
    }

    @Override
    public void heartbeat() {
        store.touchAll();
    }

    @Override
    public void close() {
        store.removeAll();
    }
}
