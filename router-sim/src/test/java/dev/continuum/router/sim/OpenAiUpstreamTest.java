package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OpenAiUpstreamTest {
    private static OpenAiUpstream upstream;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        upstream = OpenAiUpstream.start("127.0.0.1", 0, List.of("m1", "m2"), 3, 0);
    }

    @AfterAll
    static void stop() {
        upstream.close();
    }

    @Test
    void failsToStartOnATakenPortInsteadOfHanging() throws Exception {
        int taken = upstream.address().getPort();

        assertThatThrownBy(() -> OpenAiUpstream.start("127.0.0.1", taken, List.of("m1"), 1, 0))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot listen on 127.0.0.1:" + taken);
        assertThatThrownBy(() -> DirectFrontend.start("127.0.0.1", taken, List.of(), 1, 0))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("cannot listen on 127.0.0.1:" + taken);
        // The command itself exits (non-zero) rather than idling with the failed server's event loop alive.
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SimMain.class.getName(),
                "upstream", "--port", Integer.toString(taken))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the command exited").isTrue();
            assertThat(p.exitValue()).isNotZero();
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void listsItsModels() throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(uri("/v1/models")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"id\":\"m1\"", "\"id\":\"m2\"");
    }

    @Test
    void answersABufferedChatCompletionForTheRequestedModel() throws Exception {
        HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"m2\",\"messages\":[]}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        assertThat(r.body()).contains("\"object\":\"chat.completion\"", "\"model\":\"m2\"");
    }

    @Test
    void streamsTheConfiguredNumberOfEventsThenDone() throws Exception {
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"m1\",\"stream\": true}");
        assertThat(r.headers().firstValue("content-type")).hasValue("text/event-stream");
        assertThat(List.of(r.body().split("\n\n"))).hasSize(4).last().isEqualTo("data: [DONE]");
    }

    @Test
    void answersUnknownPathsWithAnOpenAiError() throws Exception {
        HttpResponse<String> r = post("/v1/nope", "{}");
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(r.body()).startsWith("{\"error\":");
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return CLIENT.send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + upstream.address().getPort() + path);
    }
}
