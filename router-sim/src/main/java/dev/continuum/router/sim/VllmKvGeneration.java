package dev.continuum.router.sim;

/**
 * Which of vLLM's two KV-event encodings a simulated engine writes ({@link SimKv#vllmEvents()}; vllm-project/vllm
 * {@code vllm/distributed/kv_events.py}).
 */
public enum VllmKvGeneration {
    /**
     * msgspec {@code array_like} structs, as SGLang and vLLM before 0.26 send them: the batch
     * {@code [ts, events, data_parallel_rank]}, each event {@code [tag, fields...]}; replay replies
     * {@code [seq, payload]}.
     */
    ARRAY,
    /**
     * vLLM 0.26 on (PR #42892): string-keyed maps, events tagged by {@code type} with {@code lora_name},
     * {@code extra_keys}, {@code group_idx} and {@code kv_cache_spec_kind}; replay replies carry the topic first
     * (PR #45177).
     */
    MAP
}
