package dev.continuum.router.eventbus;

import java.util.List;
import java.util.Set;

/**
 * The welcomed sessions, as the command API of the next part reads them. Every read is lock-free: it
 * reads one published snapshot.
 */
public interface BusSessions {
    /** Whether a live, non-draining broker session declared {@code namespace}. */
    boolean covers(String namespace);

    /** Namespaces declared by live, non-draining broker sessions. */
    Set<String> coveredNamespaces();

    int sessionCount();

    /** Live sessions, oldest first. */
    List<BusSession> sessions();

    /** Called (on a listener thread, never under a lock) after a session was welcomed, ended or started draining. */
    void addListener(Runnable onChange);

    void removeListener(Runnable onChange);
}
