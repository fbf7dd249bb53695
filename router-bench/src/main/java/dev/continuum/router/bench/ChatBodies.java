package dev.continuum.router.bench;

import java.nio.charset.StandardCharsets;

/** A realistic OpenAI chat-completion request body (about 4 KiB), with {@code model} after {@code messages}. */
final class ChatBodies {
    static final String MODEL = "Qwen/Qwen3-32B";

    private ChatBodies() {
    }

    static byte[] chatCompletion() {
        String system = "You are a careful assistant for an internal engineering wiki. Answer in Markdown. "
                + "When you quote code, use fenced blocks and name the language. If a question is about a "
                + "deployment, ask which cluster and namespace it concerns before you suggest commands. Never "
                + "invent flags: if you are unsure whether an option exists, say so and link the reference page. "
                + "Keep answers under 300 words unless the user asks for more detail.\\n\\nHouse style: "
                + "\\\"we\\\" for the team, sentence-case headings, metric units, ISO dates (2026-12-01).";
        String user1 = "Our inference fleet runs disaggregated prefill and decode workers. Latency at p99 "
                + "doubled after we added 16 more decode workers last week. What should we look at first? "
                + "The dashboards show KV cache usage at 71% on average, but two workers sit at 98%.";
        String assistant1 = "A fleet-wide average of 71% with two workers at 98% points at **uneven placement** "
                + "rather than a capacity shortfall. Check, in order:\\n\\n1. Whether the router sees load "
                + "samples from the new workers (a missing `kv_metrics` publisher makes them look idle).\\n"
                + "2. Whether requests are pinned by clients (look for `x-dynamo-*` headers at ingress).\\n"
                + "3. The prefill backlog per rank: a rank with a long queue delays every decode it feeds.\\n\\n"
                + "Which router mode do you run, and does each worker declare `data_parallel_size`?";
        String user2 = "Router mode is direct behind our proxy, data_parallel_size is 8 on every worker. The "
                + "two hot workers are the oldest ones. Here is the relevant part of the config:\\n```yaml\\n"
                + "dynamo:\\n  shim:\\n    pools:\\n      - namespace: prod\\n        backends: [shim-a, shim-b]\\n"
                + "  load:\\n    max_staleness: 3s\\n```\\nDo you see anything wrong? Also, is 3 s reasonable "
                + "for max_staleness when workers publish every millisecond under load? Température ambiante: 21 °C.";
        String json = "{\"messages\":["
                + "{\"role\":\"system\",\"content\":\"" + system + "\"},"
                + "{\"role\":\"user\",\"content\":\"" + user1 + "\"},"
                + "{\"role\":\"assistant\",\"content\":\"" + assistant1 + "\"},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" + user2 + "\"}]}],"
                + "\"model\":\"" + MODEL + "\","
                + "\"temperature\":0.7,\"top_p\":0.95,\"max_tokens\":1024,\"n\":1,\"seed\":4242,"
                + "\"stream\":true,\"stream_options\":{\"include_usage\":true},"
                + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"search_wiki\","
                + "\"description\":\"Full-text search over the engineering wiki; returns the 5 best pages.\","
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\","
                + "\"description\":\"Search terms\"},\"space\":{\"type\":\"string\",\"enum\":[\"infra\",\"ml\","
                + "\"oncall\"]},\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20}},"
                + "\"required\":[\"query\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"get_dashboard\","
                + "\"description\":\"Fetches a Grafana panel as CSV for the last N minutes.\",\"parameters\":"
                + "{\"type\":\"object\",\"properties\":{\"panel_id\":{\"type\":\"integer\"},\"minutes\":"
                + "{\"type\":\"integer\",\"default\":60}},\"required\":[\"panel_id\"]}}}],"
                + "\"tool_choice\":\"auto\",\"response_format\":{\"type\":\"text\"},"
                + "\"logit_bias\":{\"50256\":-100,\"198\":-2},\"user\":\"team-inference/alice\","
                + "\"metadata\":{\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"ticket\":\"INFRA-20417\"}}";
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
