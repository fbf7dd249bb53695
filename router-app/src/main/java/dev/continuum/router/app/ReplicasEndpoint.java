package dev.continuum.router.app;

import dev.continuum.router.admin.AdminRoute;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.replicas.PeerView;
import dev.continuum.router.replicas.ReplicaSync;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * {@code GET /admin/dynamo/replicas}: this replica (its ID, epoch, last batch number and live sequences) and each
 * followed peer with its last applied batch number (docs/replicas.md). Read from values the sync thread publishes,
 * without a lock; at most {@code max_peers} rows.
 */
final class ReplicasEndpoint implements AdminRoute.Handler {
    static final String PATH = "/admin/dynamo/replicas";

    private final ReplicaSync sync;
    private final BooleanSupplier enabled;

    ReplicasEndpoint(ReplicaSync sync, BooleanSupplier enabled) {
        this.sync = sync;
        this.enabled = enabled;
    }

    @Override
    public LocalResponse handle(LocalRequest request) {
        ReplicaSync.OwnView own = sync.own();
        Map<String, Object> self = new LinkedHashMap<>();
        self.put("replica", own.replica());
        self.put("epoch", own.epoch());
        self.put("last_seq", own.lastSeq());
        self.put("sequences", own.sequences());
        List<Object> peers = new ArrayList<>();
        for (PeerView p : sync.peers()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("replica", p.replica());
            m.put("epoch", p.epoch());
            m.put("last_seq", p.lastSeq());
            m.put("synced", p.synced());
            m.put("sequences", p.sequences());
            m.put("prefill_tokens", p.prefillTokens());
            m.put("blocks", p.blocks());
            m.put("heard_ms_ago", p.heardMillis());
            peers.add(m);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("enabled", enabled.getAsBoolean());
        body.put("self", self);
        body.put("peers", peers);
        return AdminRoute.json(200, body);
    }
}
