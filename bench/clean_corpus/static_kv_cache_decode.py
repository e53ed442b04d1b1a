"""Greedy generation from a small decoder with a static KV cache, gpt-fast style: each prompt's prefill runs eagerly
(prompts differ in length), and the one-token decode step is a CUDA graph captured once and replayed for every new
token of every prompt.

Covers: an eager phase (prefill, a new shape each prompt) and a graphed loop (decode) alternating in one run; state
that the graph updates in place across replays (the K/V cache buffers, written with index_copy_ at a position held in
a device tensor); the next token chosen on the GPU (argmax) and fed back through the static input with copy_, the
position advanced with add_, so the loop never reads a value on the host. Tokens are read with .tolist() at the end.

Why it is correct: the cache and the static token/position tensors exist before the capture and are only updated in
place; the decode step is warmed up on a side stream before its capture (its writes land at a position the prefill
or the first decode step overwrites before it is read: every position is written before the mask lets it be read);
the logits are cloned after each replay. The program checks every decode step's logits against the model run
without the cache on the whole sequence so far.
"""
import math
import sys

import torch
import torch.nn.functional as F

import _oracle as oracle

NAME = "static_kv_cache_decode"
VOCAB = 512
DIM = 128
HEADS = 4
LAYERS = 2
MAX_LEN = 96
BATCH = 4
PROMPTS = (12, 23, 7)  # prompt lengths
NEW_TOKENS = 20


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM, bias=False)
        self.out = torch.nn.Linear(DIM, DIM, bias=False)
        shape = (BATCH, HEADS, MAX_LEN, DIM // HEADS)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def forward(self, x, pos, mask, use_cache):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, HEADS, DIM // HEADS).transpose(1, 2) for z in self.qkv(x).split(DIM, dim=2))
        if use_cache:
            self.k_cache.index_copy_(2, pos, k)
            self.v_cache.index_copy_(2, pos, v)
            k, v = self.k_cache, self.v_cache
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(b, t, DIM))


class Decoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Embedding(MAX_LEN, DIM)
        self.attn = torch.nn.ModuleList(Attention() for _ in range(LAYERS))
        self.mlp = torch.nn.ModuleList(
            torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.SiLU(), torch.nn.Linear(4 * DIM, DIM))
            for _ in range(LAYERS))
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(DIM) for _ in range(2 * LAYERS + 1))
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        self.register_buffer("slots", torch.arange(MAX_LEN), persistent=False)

    def forward(self, ids, pos, use_cache=True):
        """ids (BATCH, T) at positions pos (T,); with the cache, attends to every cached position <= its own."""
        keys = self.slots if use_cache else pos
        mask = keys[None, :] <= pos[:, None]  # (T, keys)
        x = self.tok(ids) + self.pos(pos)
        for i in range(LAYERS):
            x = x + self.attn[i](self.norms[2 * i](x), pos, mask, use_cache)
            x = x + self.mlp[i](self.norms[2 * i + 1](x))
        return self.head(self.norms[-1](x))


def main():
    torch.manual_seed(0)
    model = Decoder().cuda().eval()
    prompts = [torch.randint(0, VOCAB, (BATCH, n), device="cuda") for n in PROMPTS]
    static_token = torch.zeros(BATCH, 1, dtype=torch.long, device="cuda")
    static_pos = torch.zeros(1, dtype=torch.long, device="cuda")
    oracle.start()

    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                model(static_token, static_pos)
        torch.cuda.current_stream().wait_stream(side)
        if oracle.GRAPHS:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_logits = model(static_token, static_pos)

        sequences, step_logits = [], []
        for prompt in prompts:
            n = prompt.shape[1]
            torch.cuda.nvtx.range_push("step")
            logits = model(prompt, torch.arange(n, device="cuda"))  # prefill, eager: its own shape
            torch.cuda.nvtx.range_pop()
            token = logits[:, -1:].argmax(-1)
            generated = [token]
            static_pos.fill_(n)
            for _ in range(NEW_TOKENS - 1):
                torch.cuda.nvtx.range_push("step")
                static_token.copy_(token)
                if oracle.GRAPHS:
                    graph.replay()
                else:
                    static_logits = model(static_token, static_pos)
                last = static_logits[:, -1].clone()
                step_logits.append(last)
                token = last.argmax(-1, keepdim=True)
                generated.append(token)
                static_pos.add_(1)
                torch.cuda.nvtx.range_pop()
            sequences.append(torch.cat([prompt] + generated, dim=1))

        # Check: each decode step's logits against the cache-free model on the whole sequence up to that token.
        torch.cuda.synchronize()
        worst, i = 0.0, 0
        for prompt, sequence in zip(prompts, sequences):
            n, total = prompt.shape[1], sequence.shape[1]
            full = model(sequence[:, :-1], torch.arange(total - 1, device="cuda"), use_cache=False)
            for t in range(n, total - 1):
                worst = max(worst, float((full[:, t] - step_logits[i]).abs().max()))
                i += 1
    scale = max(float(s.abs().max()) for s in step_logits)
    print(f"generated {NEW_TOKENS} tokens for {len(prompts)} prompts; first: {sequences[0][0, -8:].tolist()}; "
          f"decode logits within {worst:.3g} of the cache-free model (max |logit| {scale:.3g})", flush=True)
    if not math.isfinite(scale) or worst > 1e-3 * max(scale, 1.0):
        sys.exit(f"FAIL {NAME}: decode logits differ from the cache-free model by {worst:.3g}")
    oracle.save(NAME, outputs=step_logits)
    print(f"OK {NAME}", flush=True)


if __name__ == "__main__":
    main()
