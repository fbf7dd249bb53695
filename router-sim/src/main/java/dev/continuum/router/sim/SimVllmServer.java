package dev.continuum.router.sim;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A simulated plain vLLM server, as a router sees one: the OpenAI API ({@code GET /v1/models}, {@code GET /health},
 * {@code POST /v1/chat/completions}, buffered or as SSE) in front of one engine with a prefix cache of
 * {@code capacityBlocks} blocks, publishing its KV events the way vLLM's {@code --kv-events-config} publisher does
 * ({@link VllmKvEngine}: PUB socket and replay socket, in the {@link VllmKvGeneration} asked for).
 *
 * <p>A chat body is rendered and tokenized as Qwen3's template renders a text conversation ({@link SimTokenizer}),
 * off the event loop; then the engine serves it: its cached prefix is looked up, the rest stored (evictions and
 * new blocks go out as events), and the answer waits for the simulated time to first token, the Dynamo workers'
 * prefill model ({@link PrefillQueue}: one prefill at a time in arrival order, {@code prefill_base +
 * prefill_per_token × uncached tokens} each), so TTFT grows with both the uncached tokens and the queue. The
 * answer's {@code usage}
 * carries {@code prompt_tokens} and {@code prompt_tokens_details.cached_tokens}, as vLLM reports them; the
 * replay harness reads the same figures and each request's TTFT from {@link #stats}.
 */
public final class SimVllmServer implements AutoCloseable {
    private static final Pattern MODEL = Pattern.compile("\"model\"\\s*:\\s*\"([^\"]{1,256})\"");
    private static final Pattern STREAM = Pattern.compile("\"stream\"\\s*:\\s*true");

    /**
     * @param model           the model served (listed by {@code /v1/models}; any model name is answered)
     * @param tokenizerJson   Qwen3's {@code tokenizer.json}
     * @param blockSize       tokens per KV block ({@code --block-size})
     * @param capacityBlocks  blocks the prefix cache holds
     * @param generation      the KV-event encoding: the tagged maps of vLLM 0.26 on, or the older arrays
     * @param topic           the publisher's topic
     * @param prefillBase     fixed cost of a prefill
     * @param prefillPerToken cost per uncached prompt token
     */
    public record Options(String model, Path tokenizerJson, int blockSize, long capacityBlocks,
                          VllmKvGeneration generation, String topic, Duration prefillBase, Duration prefillPerToken) {
        public static Options of(String model, Path tokenizerJson) {
            return new Options(model, tokenizerJson, 16, 4096, VllmKvGeneration.MAP, "", Duration.ofMillis(2),
                    Duration.ofNanos(20_000));
        }

        public Options withGeneration(VllmKvGeneration g) {
            return new Options(model, tokenizerJson, blockSize, capacityBlocks, g, topic, prefillBase, prefillPerToken);
        }

        public Options withCapacity(long blocks) {
            return new Options(model, tokenizerJson, blockSize, blocks, generation, topic, prefillBase,
                    prefillPerToken);
        }

        public Options withPrefill(Duration base, Duration perToken) {
            return new Options(model, tokenizerJson, blockSize, capacityBlocks, generation, topic, base, perToken);
        }
    }

    private final Options options;
    private final SimTokenizer tokenizer;
    /** Whether {@link #close} closes the tokenizer (false when the caller shares one among servers). */
    private final boolean ownsTokenizer;
    private final VllmKvEngine engine;
    private final ExecutorService encoders;
    private final EventLoopGroup group;
    private final Channel channel;
    /** Guarded by {@code this}, as are {@link #counters} and serving on the engine. */
    private final PrefillQueue queue;
    private final ServeCounters counters = new ServeCounters();
    private long lagMax;
    private long lagTotal;

    private SimVllmServer(Options options, String host, int port, @Nullable SimTokenizer shared)
            throws InterruptedException {
        this.options = options;
        this.ownsTokenizer = shared == null;
        this.tokenizer = shared != null ? shared : SimTokenizer.load(options.tokenizerJson());
        this.queue = new PrefillQueue(options.prefillBase(), options.prefillPerToken());
        this.engine = new VllmKvEngine(options.generation(), options.blockSize(), options.capacityBlocks(),
                options.topic());
        this.encoders = Executors.newFixedThreadPool(1, r -> {
            Thread t = new Thread(r, "sim-vllm-encode");
            t.setDaemon(true);
            return t;
        });
        this.group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        ChannelFuture bound = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8 << 20), new Handler());
                    }
                }).bind(host, port).await();
        if (!bound.isSuccess()) {
            close();
            throw new IllegalStateException("cannot listen on " + host + ":" + port, bound.cause());
        }
        this.channel = bound.channel();
    }

    /** Starts a server on {@code host:port} (0: any free port) with its KV publisher. */
    public static SimVllmServer start(String host, int port, Options options) throws InterruptedException {
        return new SimVllmServer(options, host, port, null);
    }

    /** As {@link #start(String, int, Options)}, tokenizing with {@code tokenizer} (not closed with the server). */
    static SimVllmServer start(String host, int port, Options options, SimTokenizer tokenizer)
            throws InterruptedException {
        return new SimVllmServer(options, host, port, tokenizer);
    }

    public URI baseUrl() {
        InetSocketAddress a = (InetSocketAddress) channel.localAddress();
        return URI.create("http://127.0.0.1:" + a.getPort());
    }

    /** The KV-event PUB socket: a router's {@code endpoint}. */
    public String kvEndpoint() {
        return engine.endpoint();
    }

    /** The KV-event replay socket: a router's {@code replay_endpoint}. */
    public String replayEndpoint() {
        return engine.replayEndpoint();
    }

    /** The next {@code n} KV batches are numbered and kept for replay but not sent: subscribers see a gap. */
    public void dropNextKvBatches(int n) {
        engine.dropNext(n);
    }

    /** Publishes {@code payload} as the next KV batch, unchecked (a hostile frame for tests). */
    public void publishRawKvBatch(byte[] payload) {
        engine.publishRaw(payload);
    }

    /** KV batches sent on the PUB socket so far. */
    public long kvBatchesPublished() {
        return engine.published();
    }

    /** Chat requests served. */
    public synchronized long requests() {
        return counters.requests();
    }

    public synchronized long promptTokens() {
        return counters.promptTokens();
    }

    /** Prompt tokens that were served from the prefix cache. */
    public synchronized long cachedTokens() {
        return counters.cachedTokens();
    }

    /** Leading blocks of this body's prompt the cache holds (the oracle's question), without touching them. */
    public int cachedPrefix(String chatBody) {
        return engine.cachedPrefix(tokenizer.promptTokens(chatBody));
    }

    /** What this server has served: requests, prompt and cached tokens, each request's simulated TTFT. */
    synchronized ServeCounters.Stats stats() {
        return counters.stats();
    }

    /** The prompt tokens of a chat body, as this server tokenizes it. */
    public int[] promptTokens(String chatBody) {
        return tokenizer.promptTokens(chatBody);
    }

    /** What serving one prompt cost: its simulated time to first token and the prompt tokens found cached. */
    record Served(long ttftNanos, int cachedTokens) {
    }

    /** Serves a prompt (any thread) that arrived at {@code arrivalNanos}. */
    synchronized Served serve(int[] tokens, long arrivalNanos) {
        int cachedBlocks = engine.serve(tokens);
        int cached = Math.min(tokens.length, cachedBlocks * options.blockSize());
        long ttft = queue.admit(arrivalNanos, tokens.length - cached);
        counters.served(tokens.length, cached, ttft);
        long lag = System.nanoTime() - arrivalNanos;
        lagMax = Math.max(lagMax, lag);
        lagTotal += lag;
        return new Served(ttft, cached);
    }

    /**
     * How long requests waited from their arrival to being served, in nanoseconds, as {@code {longest, total}}: the
     * simulator's own tokenizing delay, by which its KV events (sent when a prompt is served) trail the arrival.
     */
    synchronized long[] serveLag() {
        return new long[] {lagMax, lagTotal};
    }

    @Override
    public void close() {
        if (channel != null) {
            channel.close().syncUninterruptibly();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        encoders.shutdownNow();
        engine.close();
        if (ownsTokenizer) {
            tokenizer.close();
        }
    }

    private final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String path = request.uri();
            int q = path.indexOf('?');
            path = q >= 0 ? path.substring(0, q) : path;
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (request.method().equals(HttpMethod.GET) && path.equals("/v1/models")) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json", "{\"object\":\"list\",\"data\":[{"
                        + "\"id\":\"" + options.model() + "\",\"object\":\"model\",\"owned_by\":\"vllm\"}]}");
            } else if (request.method().equals(HttpMethod.GET) && path.equals("/health")) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json", "{}");
            } else if (request.method().equals(HttpMethod.POST) && path.equals("/v1/chat/completions")) {
                String body = request.content().toString(StandardCharsets.UTF_8);
                long arrival = System.nanoTime();
                encoders.execute(() -> {
                    int[] tokens;
                    try {
                        tokens = tokenizer.promptTokens(body);
                    } catch (RuntimeException e) {
                        ctx.executor().execute(() -> respond(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST,
                                "application/json", "{\"error\":{\"message\":\"unreadable body\",\"type\":"
                                        + "\"BadRequestError\",\"code\":400}}"));
                        return;
                    }
                    Served served = serve(tokens, arrival);
                    long wait = Math.max(0, arrival + served.ttftNanos() - System.nanoTime());
                    ctx.executor().schedule(() -> answer(ctx, keepAlive, body, tokens.length, served.cachedTokens()),
                            wait, TimeUnit.NANOSECONDS);
                });
            } else {
                respond(ctx, keepAlive, HttpResponseStatus.NOT_FOUND, "application/json",
                        "{\"error\":{\"message\":\"not found\",\"type\":\"NotFoundError\",\"code\":404}}");
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        private void answer(ChannelHandlerContext ctx, boolean keepAlive, String body, int prompt, int cached) {
            Matcher m = MODEL.matcher(body);
            String model = m.find() ? m.group(1) : options.model();
            String usage = "\"usage\":{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":1,\"total_tokens\":"
                    + (prompt + 1) + ",\"prompt_tokens_details\":{\"cached_tokens\":" + cached + "}}";
            if (STREAM.matcher(body).find()) {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "text/event-stream",
                        "data: {\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion.chunk\",\"model\":\"" + model
                                + "\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},"
                                + "\"finish_reason\":\"stop\"}]," + usage + "}\n\ndata: [DONE]\n\n");
            } else {
                respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json",
                        "{\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion\",\"model\":\"" + model
                                + "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
                                + "\"finish_reason\":\"stop\"}]," + usage + "}");
            }
        }

        private void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
                String contentType, String text) {
            byte[] body = text.getBytes(StandardCharsets.UTF_8);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.wrappedBuffer(body));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
            HttpUtil.setKeepAlive(response, keepAlive);
            var written = ctx.writeAndFlush(response);
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
            }
        }
    }
}
