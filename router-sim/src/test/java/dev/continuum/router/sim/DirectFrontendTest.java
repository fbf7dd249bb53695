package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.DirectFrontend.Worker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DirectFrontendTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private DirectFrontend frontend;

    @AfterEach
    void stop() {
        if (frontend != null) {
            frontend.close();
        }
    }

    private HttpResponse<String> chat(boolean stream, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + frontend.address().getPort()
                        + "/v1/chat/completions"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":" + stream
                        + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
                .header("content-type", "application/json");
        if (headers.length > 0) {
            b.headers(headers);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private void disaggregated() throws Exception {
        frontend = DirectFrontend.start("127.0.0.1", 0, List.of(new Worker(-2L, Role.DECODE, 2),
                new Worker(7, Role.PREFILL, 1)), 3, 0);
    }

    @Test
    void servesAPairPinnedInDecimalAndCountsItOnBothWorkers() throws Exception {
        disaggregated();
        HttpResponse<String> r = chat(false, "x-dynamo-worker-instance-id", "18446744073709551614",
                "x-dynamo-prefill-instance-id", "7", "x-dynamo-dp-rank", "1");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(frontend.served(-2L)).isEqualTo(1);
        assertThat(frontend.served(7)).isEqualTo(1);
    }

    @Test
    void streamsSseTokensThenDone() throws Exception {
        disaggregated();
        HttpResponse<String> r = chat(true, "x-dynamo-worker-instance-id", "18446744073709551614",
                "x-prefill-instance-id", "7");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("tok0", "tok2", "data: [DONE]");
    }

    @Test
    void refusesAMissingPrefillIdWithUpstreamsExactText() throws Exception {
        disaggregated();
        HttpResponse<String> r = chat(false, "x-dynamo-worker-instance-id", "18446744073709551614");
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.body()).contains(DirectFrontend.PREFILL_ID_ERROR)
                .contains("Prefill worker ID required in Direct routing mode");
    }

    @Test
    void readsHexadecimalIdsAsAbsent() throws Exception {
        disaggregated();
        HttpResponse<String> r = chat(false, "x-dynamo-worker-instance-id", "fffffffffffffffe",
                "x-dynamo-prefill-instance-id", "7");
        assertThat(r.body()).contains(DirectFrontend.WORKER_ID_ERROR);
    }

    @Test
    void rejectsUnknownIdsWrongRolesAndUndeclaredRanks() throws Exception {
        disaggregated();
        assertThat(chat(false, "x-dynamo-worker-instance-id", "5", "x-dynamo-prefill-instance-id", "7").body())
                .contains(DirectFrontend.UNKNOWN_WORKER_ERROR);
        assertThat(chat(false, "x-dynamo-worker-instance-id", "7", "x-dynamo-prefill-instance-id", "7").body())
                .contains(DirectFrontend.UNKNOWN_WORKER_ERROR);
        assertThat(chat(false, "x-dynamo-worker-instance-id", "18446744073709551614",
                "x-dynamo-prefill-instance-id", "7", "x-dynamo-dp-rank", "2").body())
                .contains(DirectFrontend.UNKNOWN_WORKER_ERROR);
    }

    @Test
    void anAggregatedFleetNeedsNoPrefillId() throws Exception {
        frontend = DirectFrontend.start("127.0.0.1", 0, List.of(new Worker(3, Role.AGGREGATED, 1)), 1, 0);
        assertThat(chat(false, "x-dynamo-worker-instance-id", "3").statusCode()).isEqualTo(200);
        frontend.workers(List.of(new Worker(3, Role.AGGREGATED, 1), new Worker(9, Role.PREFILL, 1)));
        assertThat(chat(false, "x-dynamo-worker-instance-id", "3").body()).contains(DirectFrontend.PREFILL_ID_ERROR);
    }

    @Test
    void recordsEachAcceptedBodyWithItsTokenDataAndNotTheRefusedOnes() throws Exception {
        frontend = DirectFrontend.start("127.0.0.1", 0, List.of(new Worker(3, Role.AGGREGATED, 1)), 1, 0);
        String withTokens = "{\"model\":\"m\",\"messages\":[],\"nvext\":{\"token_data\":[0,151644,4294967295]}}";
        String notU32 = "{\"model\":\"m\",\"messages\":[],\"nvext\":{\"token_data\":[1,-1]}}";

        assertThat(post(withTokens, "x-dynamo-worker-instance-id", "3").statusCode()).isEqualTo(200);
        assertThat(chat(false, "x-dynamo-worker-instance-id", "3").statusCode()).isEqualTo(200);
        assertThat(post(notU32, "x-dynamo-worker-instance-id", "3").statusCode()).isEqualTo(200);
        assertThat(post(withTokens, "x-dynamo-worker-instance-id", "99").statusCode()).isEqualTo(500);

        List<ReceivedChat> got = frontend.receivedChats();
        assertThat(got).hasSize(3);
        assertThat(got.get(0).body()).isEqualTo(withTokens);
        assertThat(got.get(0).tokenData()).containsExactly(0, 151_644, 4_294_967_295L);
        assertThat(got.get(0).decodeWorker()).isEqualTo(3);
        assertThat(got.get(1).tokenData()).isNull();
        assertThat(got.get(1).tokenDataValid()).isTrue();
        assertThat(got.get(2).tokenData()).isNull();
        assertThat(got.get(2).tokenDataValid()).isFalse();
    }

    private HttpResponse<String> post(String body, String... headers) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + frontend.address().getPort()
                        + "/v1/chat/completions")).POST(HttpRequest.BodyPublishers.ofString(body))
                .header("content-type", "application/json").headers(headers).build(), HttpResponse.BodyHandlers.ofString());
    }
}
