/**
 * The backend KV cache index: for each plain backend with a {@code dynamo.kv_cache_index} source, the blocks its
 * KV-event stream says it holds, fed by one bounded source per backend (an SSE stream dialled directly or relayed
 * by a kv-listener over the event bus, or the engine's own vLLM/SGLang ZMQ stream), with its meters and admin rows.
 */
@NullMarked
package dev.continuum.router.kv.backend;

import org.jspecify.annotations.NullMarked;
