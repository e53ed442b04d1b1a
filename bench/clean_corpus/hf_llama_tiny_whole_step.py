"""Hugging Face Llama (tiny random config, grouped-query attention through SDPA) whose whole training step is captured
with torch.cuda.graph: forward with labels (the model computes the causal-LM loss itself), backward and
Adam(capturable=True) step, by the recipe of PyTorch's documentation.

Covers: a transformers decoder inside a manual whole-step capture: rotary embeddings (inv_freq buffer), RMSNorm,
grouped-query attention, the model's own shifted cross-entropy loss (labels padded with -100 on the GPU), all
captured, then replayed on new token batches copied into the static input.

Why it is correct: use_cache=False (no DynamicCache object is built or grown) and no attention mask (SDPA's
is_causal), so the captured code holds no host synchronization; side-stream warmup of 3 iterations; grads set to
None before the capture; the static ids are never rebound; the loss is read only after the loop.
"""
import math

import torch
from transformers import LlamaConfig, LlamaForCausalLM

import _oracle as oracle

NAME = "hf_llama_tiny_whole_step"
BATCH = 8
SEQ = 64
VOCAB = 1000
STEPS = 30


def main():
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=128,
                         attn_implementation="sdpa")
    model = LlamaForCausalLM(config).cuda().train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, capturable=True)
    batches = [torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda") for _ in range(4)]

    static_ids = torch.empty(BATCH, SEQ, dtype=torch.long, device="cuda")
    static_ids.copy_(batches[0])

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            torch.cuda.nvtx.range_push("step")
            optimizer.zero_grad(set_to_none=True)
            warm_loss = model(input_ids=static_ids, labels=static_ids, use_cache=False).loss
            warm_loss.backward()
            optimizer.step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(s)
    # The last warmup loss keeps the warmup's autograd graph alive, and with it the AccumulateGrad nodes made on the
    # side stream: dropping it lets the capture make its own (else PyTorch warns of a stream mismatch).
    del warm_loss

    def train_step():
        optimizer.zero_grad(set_to_none=True)
        loss = model(input_ids=static_ids, labels=static_ids, use_cache=False).loss
        loss.backward()
        optimizer.step()
        return loss

    oracle.start(model.parameters())
    if oracle.GRAPHS:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_loss = train_step()

    for step in range(STEPS):
        torch.cuda.nvtx.range_push("step")
        static_ids.copy_(batches[step % len(batches)])
        if oracle.GRAPHS:
            g.replay()
        else:
            static_loss = train_step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = static_loss.item()
    print(f"final loss {final:.4f} attention {model.config._attn_implementation}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
