package dev.continuum.router.discovery.reducer;

import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.reducer.HeldRecord.CardIdentity;
import dev.continuum.router.discovery.reducer.HeldRecord.CardRecord;
import dev.continuum.router.discovery.reducer.HeldRecord.ChannelRecord;
import dev.continuum.router.discovery.reducer.HeldRecord.EndpointRecord;
import dev.continuum.router.discovery.reducer.RecordParser.Parsed;
import dev.continuum.router.discovery.reducer.RecordParser.Rejected;
import dev.continuum.router.discovery.reducer.RecordParser.Skipped;
import dev.continuum.router.discovery.reducer.RoleResolver.Conflict;
import dev.continuum.router.discovery.reducer.RoleResolver.Resolved;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds records by etcd key (three keyspaces), indexes them by the identity each value claims, and
 * materializes workers and publishers incrementally: an event re-evaluates only the identities it touched,
 * so a put costs the same with 16 workers or 16,384.
 *
 * <p>Duplicate identities: two keys claiming one identity (a generate instance, a base card, a publisher)
 * are refused together, because the router cannot tell a genuine record from a forged one. A refused
 * instance makes no worker, refused cards leave the worker without a card (no fallback to a legacy card),
 * a refused publisher makes no subscription target. Each distinct conflicting key set is logged and counted
 * once; when the extra keys go away the survivor is used again.
 */
final class EtcdRecordReducer implements DiscoveryReducer {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdRecordReducer.class);
    /** Keys shown in one duplicate warning. */
    private static final int MAX_KEYS_LOGGED = 4;

    private final List<String> namespaces;
    /** Each watched namespace to its one configured instance, so every worker shares it. */
    private final Map<String, String> namespaceSet;
    private final StringInterner strings;
    private final DiscoveryLimits limits;
    private final Clock clock;
    private final DiscoveryCounters counters;
    /** Cleared by the first resync: after it, a worker that comes back is a new worker. */
    private @Nullable FleetView carryOver;

    private final EnumMap<Keyspace, Map<String, HeldRecord>> held = new EnumMap<>(Keyspace.class);
    private final Map<WorkerId, List<String>> generateKeys = new HashMap<>();
    private final Map<CardIdentity, List<String>> cardKeys = new HashMap<>();
    private final Map<PublisherId, List<String>> channelKeys = new HashMap<>();

    private final SortedList<WorkerId, DynamoWorker> workers = new SortedList<>(DynamoWorker::id);
    private final SortedList<PublisherId, DynamoPublisher> publishers = new SortedList<>(DynamoPublisher::id);
    private @Nullable FleetView view = FleetView.empty();

    // Scratch state of one apply(). Replaced rather than cleared after a big resync: clearing or iterating a
    // HashSet costs its capacity, which a 49,152-record resync grows for good.
    private Set<WorkerId> dirtyWorkers = new HashSet<>();
    private Set<PublisherId> dirtyPublishers = new HashSet<>();
    private Set<Object> touchedIdentities = new HashSet<>();
    private boolean changed;

    // What was already logged (and counted), so a bad record that stays bad logs once.
    private final Map<Object, List<String>> activeConflicts = new HashMap<>();
    private final Map<String, DiscoveryEventKind> badKeys = new HashMap<>();
    private final int maxBadKeysRemembered;
    private final LogOnce<String> unsupportedLogged;
    private final Map<WorkerId, Conflict> excluded = new HashMap<>();
    private final LogOnce<WorkerId> releaseLogged;
    private final EnumSet<Keyspace> atCapacity = EnumSet.noneOf(Keyspace.class);
    private final RefusedKeys refused;

    EtcdRecordReducer(List<String> namespaces, DiscoveryLimits limits, Clock clock, DiscoveryCounters counters,
                      FleetView carryOver) {
        this.namespaces = List.copyOf(namespaces);
        this.namespaceSet = new HashMap<>();
        namespaces.forEach(namespace -> namespaceSet.put(namespace, namespace));
        this.strings = new StringInterner(4096);
        this.limits = limits;
        this.clock = clock;
        this.counters = counters;
        this.carryOver = carryOver.workers().isEmpty() ? null : carryOver;
        for (Keyspace keyspace : Keyspace.values()) {
            held.put(keyspace, new HashMap<>());
        }
        // Bad keys are not held, so they do not count against the keyspace caps: bound their memory apart.
        this.maxBadKeysRemembered = limits.maxRecordsPerKeyspace() * Keyspace.values().length;
        this.unsupportedLogged = new LogOnce<>(limits.maxRecordsPerKeyspace());
        this.releaseLogged = new LogOnce<>(limits.maxRecordsPerKeyspace());
        this.refused = new RefusedKeys(limits.maxRecordsPerKeyspace());
    }

    @Override
    public List<String> namespaces() {
        return namespaces;
    }

    @Override
    public boolean apply(DiscoveryEvent event) {
        changed = false;
        if (event instanceof DiscoveryEvent.Put put) {
            counters.increment(DiscoveryEventKind.PUT);
            put(put.key(), put.value());
        } else if (event instanceof DiscoveryEvent.Delete delete) {
            // Only a delete of a held record counts: deletes of refused, bad or foreign keys are not fleet changes.
            if (delete(delete.key())) {
                counters.increment(DiscoveryEventKind.DELETE);
            }
        } else if (event instanceof DiscoveryEvent.Resync resync) {
            counters.increment(DiscoveryEventKind.RESYNC);
            resync(resync.records());
            materializeDirty();
            carryOver = null;
        }
        materializeDirty();
        checkConflicts();
        if (changed) {
            view = null;
        }
        return changed;
    }

    @Override
    public List<String> admissible() {
        List<String> keys = new ArrayList<>();
        for (Keyspace keyspace : Keyspace.values()) {
            int room = limits.maxRecordsPerKeyspace() - heldIn(keyspace).size();
            if (room > 0 && refused.size(keyspace) > 0) {
                refused.oldest(keyspace, room, keys);
            }
        }
        return keys;
    }

    @Override
    public FleetView view() {
        FleetView current = view;
        if (current == null) {
            current = FleetView.sorted(workers.snapshot(), publishers.snapshot());
            view = current;
        }
        return current;
    }

    // ---- records by key ----

    private void put(String key, byte[] value) {
        Keyspace keyspace = Keyspace.of(key).orElse(null);
        String namespace = keyspace == null ? null : namespaceOf(keyspace, key);
        if (keyspace == null || namespace == null) {
            LOG.debug("ignoring key {} outside the watched prefixes", LogSafe.escape(key));
            return;
        }
        // A refused key put again while there is still no room keeps its place in the queue; with room, the
        // put decides afresh (it enters, or turns out bad) and the key leaves the queue either way.
        if (refused.contains(keyspace, key) && heldIn(keyspace).size() >= limits.maxRecordsPerKeyspace()) {
            return;
        }
        refused.remove(keyspace, key);
        if (value.length > limits.maxRecordBytes()) {
            reject(key, DiscoveryEventKind.OVERSIZED, "value of " + value.length + " bytes exceeds MAX_RECORD_BYTES ("
                    + limits.maxRecordBytes() + "), refused before parsing");
            unhold(keyspace, key);
            return;
        }
        RecordParser.Result result = RecordParser.parse(keyspace, namespace, key, value, limits, strings);
        if (result instanceof Rejected rejected) {
            reject(key, rejected.kind(), rejected.reason());
            unhold(keyspace, key);
        } else if (result instanceof Skipped skipped) {
            LOG.trace("skipping {}: {}", LogSafe.escape(key), LogSafe.escape(skipped.reason()));
            badKeys.remove(key);
            unhold(keyspace, key);
        } else if (result instanceof Parsed parsed) {
            hold(keyspace, key, parsed.record(), parsed.unsupported());
        }
    }

    /** Returns whether a held record was deleted. */
    private boolean delete(String key) {
        badKeys.remove(key);
        Keyspace keyspace = Keyspace.of(key).orElse(null);
        if (keyspace == null) {
            return false;
        }
        refused.remove(keyspace, key);
        return unhold(keyspace, key);
    }

    private void resync(List<DiscoveryEvent.Put> records) {
        Map<String, DiscoveryEvent.Put> latest = new LinkedHashMap<>();
        for (DiscoveryEvent.Put record : records) {
            latest.put(record.key(), record);
        }
        for (Keyspace keyspace : Keyspace.values()) {
            for (String key : new ArrayList<>(heldIn(keyspace).keySet())) {
                if (!latest.containsKey(key)) {
                    unhold(keyspace, key);
                }
            }
        }
        badKeys.keySet().removeIf(key -> !latest.containsKey(key));
        refused.retainAll(latest.keySet());
        // Held keys first: at a keyspace's capacity, existing records keep updating and only new keys wait.
        // Then keys refused earlier, oldest refusal first, then the rest in the source's order.
        List<DiscoveryEvent.Put> newKeys = new ArrayList<>();
        for (DiscoveryEvent.Put record : latest.values()) {
            if (isHeld(record.key())) {
                put(record.key(), record.value());
            } else {
                newKeys.add(record);
            }
        }
        Set<String> waited = new HashSet<>();
        for (Keyspace keyspace : Keyspace.values()) {
            for (String key : refused.all(keyspace)) {
                waited.add(key);
                // retainAll above kept only the keys this listing has
                put(key, Objects.requireNonNull(latest.get(key)).value());
            }
        }
        for (DiscoveryEvent.Put record : newKeys) {
            if (!waited.contains(record.key())) {
                put(record.key(), record.value());
            }
        }
    }

    private Map<String, HeldRecord> heldIn(Keyspace keyspace) {
        return Objects.requireNonNull(held.get(keyspace)); // the constructor fills every keyspace
    }

    /** A record named by one of the indexes, which list only held keys. */
    private HeldRecord heldRecord(Keyspace keyspace, String key) {
        return Objects.requireNonNull(heldIn(keyspace).get(key));
    }

    private boolean isHeld(String key) {
        Keyspace keyspace = Keyspace.of(key).orElse(null);
        return keyspace != null && heldIn(keyspace).containsKey(key);
    }

    private void hold(Keyspace keyspace, String key, HeldRecord record, @Nullable String unsupported) {
        Map<String, HeldRecord> records = heldIn(keyspace);
        HeldRecord old = records.get(key);
        if (old == null && records.size() >= limits.maxRecordsPerKeyspace()) {
            if (atCapacity.add(keyspace)) {
                LOG.warn("keyspace {} holds MAX_RECORDS_PER_KEYSPACE ({}) keys: new keys are refused and admitted "
                        + "in the order they were refused as keys are deleted (first refused: {}); existing keys "
                        + "still update", keyspace.bucket(), limits.maxRecordsPerKeyspace(), LogSafe.escape(key));
            }
            badKeys.remove(key);
            if (refused.add(keyspace, key)) {
                counters.increment(DiscoveryEventKind.REFUSED);
            }
            return;
        }
        badKeys.remove(key);
        if (unsupported == null) {
            unsupportedLogged.forget(key);
        } else if (unsupportedLogged.first(key)) {
            LOG.warn("event channel {} is not subscribed: {}", LogSafe.escape(key), LogSafe.escape(unsupported));
            counters.increment(DiscoveryEventKind.UNSUPPORTED);
        }
        if (record.equals(old)) {
            return;
        }
        if (old != null) {
            unindex(key, old);
        }
        records.put(key, record);
        index(key, record);
    }

    /** Returns whether the key held a record. */
    private boolean unhold(Keyspace keyspace, String key) {
        Map<String, HeldRecord> records = heldIn(keyspace);
        HeldRecord old = records.remove(key);
        unsupportedLogged.forget(key);
        if (old != null) {
            unindex(key, old);
        }
        if (records.size() < limits.maxRecordsPerKeyspace()) {
            atCapacity.remove(keyspace);
        }
        return old != null;
    }

    private void reject(String key, DiscoveryEventKind kind, String reason) {
        if (rememberBad(key, kind)) {
            LOG.warn("dropped record {} ({}): {}", LogSafe.escape(key), kind.label(), LogSafe.escape(reason));
            counters.increment(kind);
        }
    }

    /** True when {@code key} newly became bad in this way (log and count it). */
    private boolean rememberBad(String key, DiscoveryEventKind kind) {
        if (badKeys.get(key) == kind) {
            return false;
        }
        if (badKeys.size() < maxBadKeysRemembered || badKeys.containsKey(key)) {
            badKeys.put(key, kind);
        }
        return true;
    }

    private @Nullable String namespaceOf(Keyspace keyspace, String key) {
        String rest = key.substring(keyspace.bucket().length() + 1);
        if (keyspace == Keyspace.EVENT_CHANNELS) {
            if (!rest.startsWith("namespace/")) {
                return null;
            }
            rest = rest.substring("namespace/".length());
        }
        int slash = rest.indexOf('/');
        if (slash <= 0) {
            return null;
        }
        String segment = rest.substring(0, slash);
        String namespace = keyspace == Keyspace.EVENT_CHANNELS ? Keyspace.decodeSegment(segment).orElse(null) : segment;
        return namespace == null ? null : namespaceSet.get(namespace);
    }

    // ---- identity indexes ----

    private void index(String key, HeldRecord record) {
        if (record instanceof EndpointRecord endpoint) {
            if (endpoint.isGenerate()) {
                addKey(generateKeys, endpoint.id(), key);
                dirtyWorkers.add(endpoint.id());
                touchedIdentities.add(endpoint.id());
            }
        } else if (record instanceof CardRecord card) {
            if (card.joins()) {
                addKey(cardKeys, card.identity(), key);
                dirtyWorkers.add(card.id());
                touchedIdentities.add(card.identity());
            }
        } else if (record instanceof ChannelRecord channel) {
            addKey(channelKeys, channel.id(), key);
            dirtyPublishers.add(channel.id());
            touchedIdentities.add(channel.id());
        }
    }

    private void unindex(String key, HeldRecord record) {
        if (record instanceof EndpointRecord endpoint) {
            if (endpoint.isGenerate()) {
                removeKey(generateKeys, endpoint.id(), key);
                dirtyWorkers.add(endpoint.id());
                touchedIdentities.add(endpoint.id());
            }
        } else if (record instanceof CardRecord card) {
            if (card.joins()) {
                removeKey(cardKeys, card.identity(), key);
                dirtyWorkers.add(card.id());
                touchedIdentities.add(card.identity());
            }
        } else if (record instanceof ChannelRecord channel) {
            removeKey(channelKeys, channel.id(), key);
            dirtyPublishers.add(channel.id());
            touchedIdentities.add(channel.id());
        }
    }

    /** Key lists are tiny (one key unless there is a conflict): immutable, sorted for stable log lines. */
    private static <I> void addKey(Map<I, List<String>> index, I identity, String key) {
        List<String> keys = index.get(identity);
        if (keys == null) {
            index.put(identity, List.of(key));
        } else if (!keys.contains(key)) {
            List<String> grown = new ArrayList<>(keys);
            grown.add(key);
            grown.sort(null);
            index.put(identity, List.copyOf(grown));
        }
    }

    private static <I> void removeKey(Map<I, List<String>> index, I identity, String key) {
        List<String> keys = index.get(identity);
        if (keys == null || !keys.contains(key)) {
            return;
        }
        if (keys.size() == 1) {
            index.remove(identity);
        } else {
            List<String> shrunk = new ArrayList<>(keys);
            shrunk.remove(key);
            index.put(identity, List.copyOf(shrunk));
        }
    }

    private void checkConflicts() {
        for (Object identity : touchedIdentities) {
            List<String> keys;
            String kind;
            if (identity instanceof WorkerId id) {
                keys = generateKeys.get(id);
                kind = "generate instance";
            } else if (identity instanceof CardIdentity id) {
                keys = cardKeys.get(id);
                kind = "base model card";
            } else {
                keys = channelKeys.get((PublisherId) identity);
                kind = "event-channel publisher";
            }
            if (keys != null && keys.size() > 1) {
                if (!keys.equals(activeConflicts.put(identity, keys))) {
                    LOG.warn("refused {} {}: {} records claim it, all dropped: {}", kind, LogSafe.escape(identity),
                            keys.size(), LogSafe.escape(describeKeys(keys)));
                    counters.increment(DiscoveryEventKind.DUPLICATE);
                }
            } else if (activeConflicts.remove(identity) != null) {
                LOG.info("{} {} is claimed by one record again", kind, LogSafe.escape(identity));
            }
        }
        touchedIdentities = fresh(touchedIdentities);
    }

    private static final int SCRATCH_CAPACITY = 64;

    private static <T> Set<T> fresh(Set<T> used) {
        if (used.size() > SCRATCH_CAPACITY) {
            return new HashSet<>();
        }
        used.clear();
        return used;
    }

    private static String describeKeys(List<String> keys) {
        String shown = String.join(", ", keys.subList(0, Math.min(MAX_KEYS_LOGGED, keys.size())));
        return keys.size() > MAX_KEYS_LOGGED ? shown + " and " + (keys.size() - MAX_KEYS_LOGGED) + " more" : shown;
    }

    // ---- materialization ----

    private void materializeDirty() {
        for (WorkerId id : dirtyWorkers) {
            materializeWorker(id);
        }
        dirtyWorkers = fresh(dirtyWorkers);
        for (PublisherId id : dirtyPublishers) {
            materializePublisher(id);
        }
        dirtyPublishers = fresh(dirtyPublishers);
    }

    private void materializeWorker(WorkerId id) {
        List<String> keys = generateKeys.get(id);
        if (keys == null || keys.size() != 1) {
            removeWorker(id);
            excluded.remove(id);
            return;
        }
        EndpointRecord endpoint = (EndpointRecord) heldRecord(Keyspace.INSTANCES, keys.get(0));
        ModelCard card = joinedCard(id, endpoint);
        RoleResolver.Resolution resolution = RoleResolver.resolve(endpoint.component(), card);
        if (resolution instanceof Conflict conflict) {
            if (!conflict.equals(excluded.put(id, conflict))) {
                LOG.warn("excluded worker {}: component {} claims role {} but its card claims {}", LogSafe.escape(id),
                        LogSafe.escape(endpoint.component()), conflict.componentClaim().wireName(),
                        conflict.cardClaim().wireName());
                counters.increment(DiscoveryEventKind.EXCLUDED);
            }
            removeWorker(id);
            return;
        }
        excluded.remove(id);
        if (card != null && card.release() != null && releaseLogged.first(id)) {
            LOG.debug("worker {} runs release {}", LogSafe.escape(id), LogSafe.escape(card.release()));
        }
        Instant now = clock.instant();
        DynamoWorker existing = workers.get(id);
        if (existing == null && carryOver != null) {
            existing = carryOver.worker(id).orElse(null);
            if (existing != null) {
                // Not in this reducer's map yet: the carried-over instance counts as a change only if it differs.
                changed = true;
            }
        }
        Instant firstSeen = existing != null ? existing.firstSeen() : now;
        DynamoWorker candidate = new DynamoWorker(id, ((Resolved) resolution).role(), endpoint.component(),
                endpoint.endpoint(), card, firstSeen, now);
        if (existing != null && existing.sameViewAs(candidate)) {
            workers.put(existing);
            return;
        }
        workers.put(candidate);
        changed = true;
    }

    private @Nullable ModelCard joinedCard(WorkerId id, EndpointRecord endpoint) {
        List<String> keys = cardKeys.get(new CardIdentity(id, endpoint.component(), endpoint.endpoint()));
        if (keys == null) {
            // A legacy card (empty component and endpoint) joins on instance ID alone; a scoped card wins.
            keys = cardKeys.get(CardIdentity.legacy(id));
        }
        if (keys == null || keys.size() != 1) {
            return null;
        }
        return ((CardRecord) heldRecord(Keyspace.MODEL_CARDS, keys.get(0))).card();
    }

    private void removeWorker(WorkerId id) {
        if (workers.remove(id) != null) {
            changed = true;
        }
    }

    private void materializePublisher(PublisherId id) {
        List<String> keys = channelKeys.get(id);
        DynamoPublisher publisher = null;
        if (keys != null && keys.size() == 1) {
            publisher = ((ChannelRecord) heldRecord(Keyspace.EVENT_CHANNELS, keys.get(0))).publisher();
        }
        if (publisher == null) {
            if (publishers.remove(id) != null) {
                changed = true;
            }
        } else if (!publisher.equals(publishers.put(publisher))) {
            changed = true;
        }
    }
}
