package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.sim.DirectFrontend.Role;
import dev.continuum.router.sim.DirectFrontend.Worker;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The emulator's {@code nvext.token_data} check over real HTTP. The reference here is a stand-in that answers fixed
 * IDs and records the bodies it was asked about (the real one, node running {@code @lenml/tokenizers} and
 * {@code @huggingface/jinja}, is wired by the router's end-to-end test); what is proved is the check itself.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TokenDataCheckTest {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    private final List<String> asked = new CopyOnWriteArrayList<>();
    private DirectFrontend frontend;
    private TokenDataCheck check;

    @BeforeEach
    void start() throws Exception {
        frontend = DirectFrontend.start("127.0.0.1", 0, List.of(new Worker(3, Role.AGGREGATED, 1)), 1, 0);
        check = frontend.verifyTokenData(body -> {
            asked.add(body);
            return new long[] {151644, 872, 4294967295L};
        });
    }

    @AfterEach
    void stop() {
        frontend.close();
    }

    private HttpResponse<String> chat(String nvext) throws Exception {
        String body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" + nvext + "}";
        return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + frontend.address().getPort()
                        + "/v1/chat/completions")).header("x-dynamo-worker-instance-id", "3")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theReferencesIdsAreServedAndCounted() throws Exception {
        HttpResponse<String> r = chat(",\"nvext\":{\"token_data\":[151644,872,4294967295]}");

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(check.verified()).isEqualTo(1);
        assertThat(asked).singleElement().asString().contains("\"content\":\"hi\"");
        assertThat(frontend.receivedChats()).singleElement().satisfies(c ->
                assertThat(c.tokenData()).containsExactly(151644, 872, 4294967295L));
    }

    @Test
    void otherIdsAreRefusedWithTheFirstDifference() throws Exception {
        HttpResponse<String> shorter = chat(",\"nvext\":{\"token_data\":[151644,872]}");
        HttpResponse<String> different = chat(",\"nvext\":{\"token_data\":[151644,873,4294967295]}");
        HttpResponse<String> invalid = chat(",\"nvext\":{\"token_data\":[151644,-1]}");

        assertThat(shorter.statusCode()).isEqualTo(400);
        assertThat(shorter.body()).contains("at index 2 (got nothing, expected 4294967295; 2 vs 3 IDs)");
        assertThat(different.statusCode()).isEqualTo(400);
        assertThat(different.body()).contains("at index 1 (got 873, expected 872; 3 vs 3 IDs)");
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(check.mismatches()).hasSize(3);
        assertThat(check.verified()).isZero();
        assertThat(frontend.receivedChats()).as("refused bodies are not served").isEmpty();
    }

    @Test
    void aBodyWithoutTokenDataIsServedUnchecked() throws Exception {
        assertThat(chat("").statusCode()).isEqualTo(200);

        assertThat(asked).isEmpty();
        assertThat(check.verified()).isZero();
    }
}
