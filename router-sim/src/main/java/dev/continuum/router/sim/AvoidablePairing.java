package dev.continuum.router.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Pairs the simulator's avoidable prefill tokens with the router's, request by request, through the decision id the
 * router forwards upstream ({@code x-continuum-decision-id}): the router's records are read from
 * {@code GET /admin/dynamo/decisions} (every page), the simulator's from {@link AvoidableTokens}. Only requests the
 * KV formula scored carry a router figure; the others are summed apart.
 */
final class AvoidablePairing {
    /** Results under which the KV formula decided, so the record's avoidable tokens are a figure. */
    private static final Set<String> SCORED = Set.of("overlap", "no_overlap", "bypass");
    private static final int PAGE = 500;
    /** The scored requests whose two figures differ that are printed one by one, the largest differences first. */
    static final int SHOWN = 12;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the router recorded for one request. */
    record RouterFigure(String result, long avoidable, long bestHeldTokens, long winnerHeldTokens) {
        boolean scored() {
            return SCORED.contains(result);
        }
    }

    /**
     * The comparison. Scored requests: {@code router} against {@code simulator} (a rank no busier held), and the
     * per-request differences split by cause: {@code indexShort} where the simulator's fleet held more than the
     * router's index knew at decision time (what another rank held, by the simulator, exceeded the router's best
     * overlap on offer: the event delay), {@code judgedBusier} where the router's index knew as much but counted
     * the holder busier, {@code predicted} where the index credited the winner with blocks it did not hold yet
     * (the predicted cache); {@code routerAhead} where the router counted more than the simulator.
     */
    record Report(long scored, long router, long simulator, long simulatorAnyRank, long equal, long indexShortRequests,
                  long indexShortTokens, long judgedBusierRequests, long judgedBusierTokens, long predictedRequests,
                  long predictedTokens, long routerAheadRequests,
                  long routerAheadTokens, long unscored, long unscoredSimulator, long unscoredSimulatorAnyRank,
                  long unmatched, long unmatchedSimulator, AvoidableTokens.Sum noDecisionId, List<String> differing) {

        void print(PrintStream out) {
            long gap = simulator - router;
            out.printf(Locale.ROOT, "avoidable prefill tokens, paired by decision id: %d scored requests: router %d,"
                    + " simulator %d (a rank no busier held them; %d any rank): difference %d (%s of the simulator's)%n",
                    scored, router, simulator, simulatorAnyRank, gap,
                    simulator == 0 ? (router == 0 ? "0 %" : "n/a") : String.format(Locale.ROOT, "%.1f %%",
                            100.0 * gap / simulator));
            out.printf(Locale.ROOT, "avoidable per request (scored): %d equal; simulator higher on %d where the router's"
                    + " index knew less than the fleet held (event delay, +%d tokens), on %d where it credited the winner"
                    + " with predicted blocks not stored yet (+%d) and on %d where it judged the holder busier (+%d);"
                    + " router higher on %d (-%d)%n", equal, indexShortRequests, indexShortTokens, predictedRequests,
                    predictedTokens, judgedBusierRequests, judgedBusierTokens, routerAheadRequests, routerAheadTokens);
            out.printf(Locale.ROOT, "avoidable, not scored by the KV formula (fallbacks, load-only): %d requests,"
                    + " simulator %d (a rank no busier) / %d (any rank); router records gone from its ring: %d"
                    + " requests, simulator %d; no decision id: %d requests, simulator %d / %d%n", unscored,
                    unscoredSimulator, unscoredSimulatorAnyRank, unmatched, unmatchedSimulator,
                    noDecisionId.requests(), noDecisionId.notBusier(), noDecisionId.anyRank());
            for (String d : differing) {
                out.println("avoidable differs: " + d);
            }
        }
    }

    /** A scored request whose two figures differ by {@code size} tokens. */
    private record Differing(long size, long id, AvoidableTokens.Served sim, RouterFigure router) {
    }

    private AvoidablePairing() {
    }

    /** Reads every record the router still holds, by id. */
    static Map<Long, RouterFigure> routerFigures(HttpClient client, URI router, String adminToken) throws Exception {
        Map<Long, RouterFigure> out = new HashMap<>();
        String before = null;
        do {
            URI page = router.resolve("/admin/dynamo/decisions?limit=" + PAGE + (before == null ? "" : "&before="
                    + before));
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(page)
                    .header("authorization", "Bearer " + adminToken).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("GET " + page + ": status " + r.statusCode());
            }
            JsonNode body = JSON.readTree(r.body());
            for (JsonNode d : body.path("decisions")) {
                long blockSize = Math.max(1, d.path("prompt").path("block_size").asLong(1));
                out.put(Long.parseLong(d.path("id").asText()), new RouterFigure(d.path("result").asText(),
                        d.path("avoidable_prefill_tokens").asLong(),
                        d.path("best_overlap_blocks").asLong() * blockSize,
                        d.path("winner_overlap_blocks").asLong() * blockSize));
            }
            JsonNode next = body.path("next_before");
            before = next.isNull() || next.isMissingNode() ? null : next.asText();
        } while (before != null);
        return out;
    }

    /** Pairs the two sides. */
    static Report pair(AvoidableTokens sim, Map<Long, RouterFigure> router) {
        long scored = 0;
        long routerSum = 0;
        long simSum = 0;
        long simAny = 0;
        long equal = 0;
        long shortN = 0;
        long shortT = 0;
        long busierN = 0;
        long predictedN = 0;
        long predictedT = 0;
        long busierT = 0;
        long aheadN = 0;
        long aheadT = 0;
        long unscored = 0;
        long unscoredSim = 0;
        long unscoredAny = 0;
        long unmatched = 0;
        long unmatchedSim = 0;
        List<Differing> differing = new ArrayList<>();
        for (Map.Entry<Long, AvoidableTokens.Served> e : sim.byDecision().entrySet()) {
            AvoidableTokens.Served s = e.getValue();
            RouterFigure f = router.get(e.getKey());
            if (f == null) {
                unmatched++;
                unmatchedSim += s.notBusier();
            } else if (!f.scored()) {
                unscored++;
                unscoredSim += s.notBusier();
                unscoredAny += s.anyRank();
            } else {
                scored++;
                routerSum += f.avoidable();
                simSum += s.notBusier();
                simAny += s.anyRank();
                long d = s.notBusier() - f.avoidable();
                if (d != 0) {
                    differing.add(new Differing(Math.abs(d), e.getKey(), s, f));
                }
                if (d == 0) {
                    equal++;
                } else if (d < 0) {
                    aheadN++;
                    aheadT -= d;
                } else if (f.winnerHeldTokens() > s.cached()) {
                    // The index credited the winner with blocks it did not hold yet (predicted for a request the
                    // worker had not stored), so what another rank held looked already matched.
                    predictedN++;
                    predictedT += d;
                } else if (s.cached() + s.anyRank() > f.bestHeldTokens()) {
                    // Another rank held more than the router's index offered on any rank: it had not heard yet.
                    shortN++;
                    shortT += d;
                } else {
                    busierN++;
                    busierT += d;
                }
            }
        }
        differing.sort((x, y) -> Long.compare(y.size(), x.size()));
        List<String> shown = new ArrayList<>();
        for (Differing d : differing.subList(0, Math.min(SHOWN, differing.size()))) {
            AvoidableTokens.Served s = d.sim();
            RouterFigure f = d.router();
            shown.add(String.format(Locale.ROOT, "decision %d (%s): simulator %d (any rank %d; the serving rank held %d"
                    + " of %d), router %d (its index: winner held %d, best on offer %d)", d.id(), f.result(),
                    s.notBusier(), s.anyRank(), s.cached(), s.prompt(), f.avoidable(), f.winnerHeldTokens(),
                    f.bestHeldTokens()));
        }
        return new Report(scored, routerSum, simSum, simAny, equal, shortN, shortT, busierN, busierT, predictedN,
                predictedT, aheadN, aheadT,
                unscored, unscoredSim, unscoredAny, unmatched, unmatchedSim, sim.unpaired(), List.copyOf(shown));
    }
}
