"""Hugging Face GPT-2 (tiny random config, dropout on) trained through torch.cuda.make_graphed_callables under bf16
autocast, AdamW eager.

Covers: a transformers model graphed through a small wrapper module whose forward takes the input ids and returns the
logits (make_graphed_callables needs tensors in and tensors out). The static input is an int64 tensor that does not
require grad (allowed: only the float outputs need grads). Dropout (embedding, attention inside SDPA, residual) draws
from the default CUDA generator, registered with every capture.

Why it is correct: use_cache=False and no attention mask, so the forward builds no KV cache and no padding mask (the
causal mask is SDPA's is_causal flag); capture and loop use the same autocast with its cache off; the next-token loss
and the optimizer run eagerly outside the graphed module; nothing synchronizes in the loop.
"""
import math

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

import _oracle as oracle

NAME = "hf_gpt2_graphed_bf16"
BATCH = 8
SEQ = 64
VOCAB = 1000
STEPS = 30


class Logits(torch.nn.Module):
    """input_ids -> logits, so that make_graphed_callables sees one tensor in and one tensor out."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, ids):
        return self.m(input_ids=ids, use_cache=False).logits


def bf16_autocast():
    return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)


def main():
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=VOCAB, n_positions=128,
                        resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1,
                        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
    model = Logits(GPT2LMHeadModel(config)).cuda().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda") for _ in range(4)]

    sample_ids = torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda")
    oracle.start(model.parameters())
    with bf16_autocast():
        graphed = oracle.make_graphed_callables(model, (sample_ids,))

    for step in range(STEPS):
        ids = batches[step % len(batches)]
        torch.cuda.nvtx.range_push("step")
        optimizer.zero_grad(set_to_none=True)
        with bf16_autocast():
            logits = graphed(ids)
        loss = F.cross_entropy(logits[:, :-1].float().reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        torch.cuda.nvtx.range_pop()

    torch.cuda.synchronize()
    final = loss.item()
    print(f"final loss {final:.4f}", flush=True)
    assert math.isfinite(final), final
    oracle.save(NAME, loss=final, parameters=model.parameters())
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
