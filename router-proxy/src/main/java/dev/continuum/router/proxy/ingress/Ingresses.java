package dev.continuum.router.proxy.ingress;

import dev.continuum.router.proxy.ingress.anthropic.AnthropicIngress;
import dev.continuum.router.proxy.ingress.anthropic.TokenCounter;
import dev.continuum.router.proxy.ingress.responses.ResponsesIngress;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.proxy.ProxyRoute;

/** Binds the router's ingresses beside the OpenAI routes. */
public final class Ingresses {
    private Ingresses() {
    }

    /** {@code options} with the Anthropic Messages and Responses routes, counting tokens with {@code counter}. */
    public static ProxyOptions standard(ProxyOptions options, TokenCounter counter) {
        ProxyOptions o = options;
        for (ProxyRoute r : AnthropicIngress.routes(counter)) {
            o = o.withIngress(r);
        }
        for (ProxyRoute r : ResponsesIngress.routes()) {
            o = o.withIngress(r);
        }
        return o;
    }
}
