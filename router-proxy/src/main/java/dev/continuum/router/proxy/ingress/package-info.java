/**
 * Client wires other than OpenAI chat completions, each a converter on the proxy's ingress seam
 * ({@link dev.continuum.router.proxy.IngressConverter}): what they share (bounded JSON reading, SSE
 * framing, reading an upstream's OpenAI error) lives here, each wire in its own package; docs/ingresses.md
 * lists what each converts, drops and refuses.
 */
@NullMarked
package dev.continuum.router.proxy.ingress;

import org.jspecify.annotations.NullMarked;
