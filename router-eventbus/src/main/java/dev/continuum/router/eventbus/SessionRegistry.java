package dev.continuum.router.eventbus;

import dev.continuum.router.eventbus.config.BusRole;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Admission and the live sessions (docs/event-bus-protocol.md, section 4.3). Admission changes a handful of
 * times per session and never on a data path, so it is serialized on this object; readers get a snapshot
 * published after each change and never lock.
 */
final class SessionRegistry implements BusSessions {
    private static final Logger LOG = LoggerFactory.getLogger(SessionRegistry.class);

    /** A published view; rebuilt on every change. */
    private record View(List<BusSession> sessions, Set<String> covered) {
        static final View EMPTY = new View(List.of(), Set.of());
    }

    /** Entry ID to its live session, in welcome order. */
    private final LinkedHashMap<String, BusSession> live = new LinkedHashMap<>();
    /** Entry ID to whether its waiting session request holds a slot (false: it may supersede a live one). */
    private final Map<String, Boolean> pending = new HashMap<>();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile View view = View.EMPTY;
    private volatile int maxSessions;

    SessionRegistry(int maxSessions) {
        this.maxSessions = maxSessions;
    }

    void maxSessions(int value) {
        maxSessions = value;
    }

    /** A session request may wait for its hello: false when its entry already waits or no slot is left. */
    synchronized boolean reserve(String entryId) {
        if (pending.containsKey(entryId)) {
            return false;
        }
        boolean supersedes = live.containsKey(entryId);
        if (!supersedes && slotsTaken() >= maxSessions) {
            return false;
        }
        pending.put(entryId, !supersedes);
        return true;
    }

    synchronized void release(String entryId) {
        pending.remove(entryId);
    }

    private int slotsTaken() {
        int slots = live.size();
        for (boolean holds : pending.values()) {
            slots += holds ? 1 : 0;
        }
        return slots;
    }

    /**
     * Turns the entry's reservation into {@code session}; returns the session it supersedes, or throws
     * {@link IllegalStateException} when the superseded session ended meanwhile and no slot is left.
     */
    @Nullable BusSession welcome(BusSession session) {
        BusSession superseded;
        synchronized (this) {
            Boolean holdsSlot = pending.remove(session.entryId());
            superseded = live.get(session.entryId());
            if (holdsSlot == null || (superseded == null && !holdsSlot && slotsTaken() >= maxSessions)) {
                throw new IllegalStateException("no session slot");
            }
            live.remove(session.entryId());
            live.put(session.entryId(), session);
            publish();
        }
        if (superseded != null) {
            superseded.end(BusErrorCode.SESSION_SUPERSEDED);
        }
        notifyListeners();
        return superseded;
    }

    /** Forgets an ended session (a no-op when a newer one of its entry took its place). */
    void ended(BusSession session) {
        synchronized (this) {
            if (!live.remove(session.entryId(), session)) {
                return;
            }
            publish();
        }
        notifyListeners();
    }

    void changed() {
        synchronized (this) {
            publish();
        }
        notifyListeners();
    }

    private void publish() {
        Set<String> covered = new TreeSet<>();
        for (BusSession s : live.values()) {
            if (s.role() == BusRole.BROKER && !s.isDraining()) {
                covered.addAll(s.namespaces());
            }
        }
        view = new View(List.copyOf(live.values()), Set.copyOf(covered));
    }

    private void notifyListeners() {
        for (Runnable listener : listeners) {
            try {
                listener.run();
            } catch (RuntimeException e) {
                LOG.warn("event bus session listener failed", e);
            }
        }
    }

    /** Every live session, for reloads and shutdown. */
    List<BusSession> snapshot() {
        return new ArrayList<>(view.sessions());
    }

    synchronized int pendingCount() {
        return pending.size();
    }

    @Override
    public boolean covers(String namespace) {
        return view.covered().contains(namespace);
    }

    @Override
    public Set<String> coveredNamespaces() {
        return view.covered();
    }

    @Override
    public int sessionCount() {
        return view.sessions().size();
    }

    @Override
    public List<BusSession> sessions() {
        return view.sessions();
    }

    @Override
    public void addListener(Runnable onChange) {
        listeners.add(onChange);
    }

    @Override
    public void removeListener(Runnable onChange) {
        listeners.remove(onChange);
    }
}
