"""hf_distilbert_item_every_step's first graphed step vs eager: which part draws differently?"""
import os, sys, torch, torch.nn.functional as F
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench", "clean_corpus"))
torch.backends.cudnn.deterministic = True
from transformers import DistilBertConfig, DistilBertForSequenceClassification
def run(graphs, attn, drop, adrop):
    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=800, dim=128, n_layers=2, n_heads=4, hidden_dim=256, max_position_embeddings=64,
                              num_labels=3, dropout=drop, attention_dropout=adrop, seq_classif_dropout=drop)
    config._attn_implementation = attn
    m = DistilBertForSequenceClassification(config).cuda().train()
    class L(torch.nn.Module):
        def __init__(s): super().__init__(); s.m = m
        def forward(s, ids): return s.m(input_ids=ids).logits
    model = L()
    ids = torch.randint(0, 800, (16, 48), device="cuda"); labels = torch.randint(0, 3, (16,), device="cuda")
    sample = torch.randint(0, 800, (16, 48), device="cuda")
    if graphs:
        f = torch.cuda.make_graphed_callables(model, (sample,))
    else:
        torch.cuda.synchronize()
        with torch.cuda.stream(torch.cuda.Stream()):
            for _ in range(3):
                out = model(sample)
                torch.autograd.grad(out, tuple(model.parameters()), torch.zeros_like(out), allow_unused=True)
        torch.cuda.synchronize()
        f = model
    losses = []
    for _ in range(3):
        losses.append(F.cross_entropy(f(ids), labels).item())
    return losses
for attn in ("sdpa",):
    for drop, adrop in ((0.1, 0.1), (0.1, 0.0), (0.0, 0.1), (0.0, 0.0)):
        g = run(True, attn, drop, adrop); e = run(False, attn, drop, adrop)
        print(f"{attn} dropout={drop} attention_dropout={adrop}: graphed {g} eager {e} max diff {max(abs(a-b) for a,b in zip(g,e)):.2e}", flush=True)
