"""PyTorch programs written blind (without reading how graphcheck detects anything) about one term of the contract of
torch.cuda.make_graphed_callables: an output of a graphed callable (a module or a plain function) lives in the graph's
static memory, which the next call of the same callable overwrites. Each defect mode keeps such an output in a local
variable and reads it after calling the same graphed callable again, so it computes with the later call's values;
each clean twin does the same computation correctly (clones the output, or consumes it fully before the next call).
One program per mode (argv[1]). The line where each defect is introduced (the assignment of the output that is later
read stale) ends in "# defect: MODE". Each program runs the same steps twice from the same seeds, once through
make_graphed_callables and once with the plain eager callable, and prints "MODE vs eager: max difference D" over its
outputs (and trained parameters where it trains); TERMS names the contract term each defect mode breaks and TWINS its
clean twin. `python3 blind_held_outputs.py MODE --cpu-check` runs only the eager reference, on the CPU.

  ema-teacher-two-views        graphed EMA teacher module (eval, no grad) called on a weak and a strong view per step;
                               the weak view's logits are kept for the cross-view distillation loss
  ema-teacher-two-views-clone  clean: the weak view's logits cloned before the second teacher call
  teacher-prev-batch           graphed teacher function (softmax probabilities) called on the previous and the current
                               batch; the drift between them weights the student's pseudo-label loss
  teacher-prev-batch-consumed  clean: the previous batch's log-probabilities taken (a new tensor) before the second call
  contrastive-query-key        frozen graphed encoder function applied to the query and the key view of an InfoNCE
                               loss that trains a projection head
  contrastive-query-key-clone  clean: the query embedding cloned before the key is encoded
  siamese-pair                 graphed siamese network (eval) embedding both images of each verification pair
  siamese-pair-clone           clean: the first embedding cloned before the second image is embedded
  decoder-prev-logits          graphed decoder step in a greedy decoding loop; `prev = logits` keeps the last step's
                               logits to measure how much the next distribution changes
  decoder-prev-logits-clone    clean: prev = logits.clone()
  loop-first-chunk             graphed chunk encoder called in a Python loop over windows of a long sequence; the first
                               window's output is kept as `first` and used after the loop (drift and summary)
  loop-first-chunk-clone       clean: first = out.clone()
  eval-clean-vs-noisy          graphed inference function for a robustness evaluation: predictions on a clean and a
                               noisy batch compared (flip rate, confidence drop)
  eval-clean-vs-noisy-reduced  clean: confidence and label of the clean batch taken with .max(-1) before the second call
  tta-flip-average             graphed CNN (eval) used for test-time augmentation: logits of the image and of its
                               horizontal flip averaged as probabilities
  tta-flip-softmax             clean: the first softmax taken before the flipped image goes through the graph
  microbatch-sum-loss          graphed model in train mode, two micro-batches per step: the first micro-batch's output
                               is kept and its loss summed with the second's before one backward
  microbatch-backward-each     clean: each micro-batch's loss is back-propagated before the next forward
"""
import itertools
import random
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

DEVICE = "cuda"
CPU_CHECK = False
STEPS = 6  # steps (or batches) each program runs


def deterministic():
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def reseed():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)


def gaussian(*shape, seed, n=STEPS + 1, scale=1.0, shift=0.0):
    """n batches of the given shape drawn from a generator of their own (the default generators untouched)."""
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return torch.randn(n, *shape, device=DEVICE, generator=gen) * scale + shift


def classes(batch, num, seed, n=STEPS + 1):
    gen = torch.Generator(device=DEVICE)
    gen.manual_seed(seed)
    return torch.randint(0, num, (n, batch), device=DEVICE, generator=gen)


def mlp(*sizes, seed=0, act=nn.ReLU):
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), act()]
    return nn.Sequential(*layers[:-1]).to(DEVICE)


def state(*modules):
    """Copies of the modules' parameters and buffers, as float."""
    tensors = itertools.chain.from_iterable(itertools.chain(m.parameters(), m.buffers()) for m in modules)
    return [t.detach().float().clone() for t in tensors]


def synchronize():
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def compare(name, run):
    """Runs the program through graphs and eagerly (same seeds) and prints the largest difference."""
    if CPU_CHECK:
        eager = run(False)
        total = sum(t.double().abs().sum().item() for t in eager)
        print("%s eager only (cpu check): %d tensors, sum of magnitudes %.6g" % (name, len(eager), total), flush=True)
        return
    graphed = run(True)
    eager = run(False)
    if len(graphed) != len(eager) or any(g.shape != e.shape for g, e in zip(graphed, eager)):
        raise SystemExit("%s: graphed and eager runs returned different shapes" % name)
    difference = max((g.float() - e.float()).abs().max().item() for g, e in zip(graphed, eager))
    print("%s vs eager: max difference %.4g" % (name, difference), flush=True)


def graph_if(fn, graphed, *samples):
    """fn passed through make_graphed_callables with copies of the sample inputs, or fn itself for the eager run."""
    if not graphed:
        return fn
    return torch.cuda.make_graphed_callables(fn, tuple(s.clone() for s in samples))


def frozen(module):
    module.eval()
    module.requires_grad_(False)
    return module


def soft_ce(student_logits, teacher_logits, temperature=2.0):
    target = F.softmax(teacher_logits / temperature, dim=-1)
    return -(target * F.log_softmax(student_logits / temperature, dim=-1)).sum(-1).mean()


def ema_teacher(name, clone):
    def run(graphed):
        reseed()
        student = mlp(32, 64, 10, seed=0)
        teacher = frozen(mlp(32, 64, 10, seed=1))
        xs = gaussian(16, 32, seed=3)
        opt = torch.optim.SGD(student.parameters(), lr=0.1)
        teacher_fwd = graph_if(teacher, graphed, xs[0])
        outputs = []
        for i in range(STEPS):
            weak = 0.9 * xs[i]
            strong = xs[i] + 0.5 * xs[i].roll(1, dims=-1)
            with torch.no_grad():
                if clone:
                    t_weak = teacher_fwd(weak).clone()
                else:
                    t_weak = teacher_fwd(weak)  # defect: ema-teacher-two-views
                t_strong = teacher_fwd(strong)
            loss = soft_ce(student(strong), t_weak) + soft_ce(student(weak), t_strong)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                for pt, ps in zip(teacher.parameters(), student.parameters()):
                    pt.mul_(0.9).add_(ps, alpha=0.1)
            outputs.append(loss.detach().clone())
        synchronize()
        return outputs + state(student, teacher)

    compare(name, run)


def teacher_prev_batch(name, consume):
    def run(graphed):
        reseed()
        student = mlp(24, 48, 6, seed=0)
        teacher = frozen(mlp(24, 64, 6, seed=2))
        xs = gaussian(32, 24, seed=4)
        opt = torch.optim.Adam(student.parameters(), lr=1e-2)

        def teacher_probs(x):
            return F.softmax(teacher(x) / 0.5, dim=-1)

        probs = graph_if(teacher_probs, graphed, xs[0])
        outputs = []
        for i in range(1, STEPS + 1):
            if consume:
                log_prev = probs(xs[i - 1]).clamp_min(1e-6).log()
                p_cur = probs(xs[i])
                drift = (p_cur * (p_cur.clamp_min(1e-6).log() - log_prev)).sum(-1)
            else:
                p_prev = probs(xs[i - 1])  # defect: teacher-prev-batch
                p_cur = probs(xs[i])
                drift = (p_cur * (p_cur.clamp_min(1e-6).log() - p_prev.clamp_min(1e-6).log())).sum(-1)
            weight = torch.exp(-drift)  # samples whose pseudo-label moved a lot count less
            pseudo = p_cur.argmax(-1)
            loss = (weight * F.cross_entropy(student(xs[i]), pseudo, reduction="none")).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            outputs += [loss.detach().clone(), drift.clone()]
        synchronize()
        return outputs + state(student)

    compare(name, run)


def contrastive(name, clone):
    def run(graphed):
        reseed()
        encoder = frozen(mlp(40, 96, 32, seed=5))
        torch.manual_seed(6)
        head = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 16)).to(DEVICE)
        opt = torch.optim.SGD(head.parameters(), lr=0.2, momentum=0.9)
        xs = gaussian(24, 40, seed=7)
        noise = gaussian(2, 24, 40, seed=8, scale=0.3)

        def embed(x):
            return F.normalize(encoder(x), dim=-1)

        embed_fn = graph_if(embed, graphed, xs[0])
        labels = torch.arange(24, device=DEVICE)
        outputs = []
        for i in range(STEPS):
            view_q, view_k = xs[i] + noise[i, 0], xs[i] + noise[i, 1]
            if clone:
                q = embed_fn(view_q).clone()
            else:
                q = embed_fn(view_q)  # defect: contrastive-query-key
            k = embed_fn(view_k)
            zq, zk = F.normalize(head(q), dim=-1), F.normalize(head(k), dim=-1)
            logits = zq @ zk.t() / 0.1
            loss = 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels))
            opt.zero_grad()
            loss.backward()
            opt.step()
            outputs.append(loss.detach().clone())
        synchronize()
        return outputs + state(head)

    compare(name, run)


class SiameseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.fc = nn.Linear(64, 16)

    def forward(self, x):
        return F.normalize(self.fc(self.conv(x).flatten(1)), dim=-1)


def siamese(name, clone):
    def run(graphed):
        reseed()
        torch.manual_seed(9)
        net = frozen(SiameseNet().to(DEVICE))
        left = gaussian(8, 1, 12, 12, seed=10)
        right = gaussian(8, 1, 12, 12, seed=11)
        same = classes(8, 2, seed=12).bool()
        right = torch.where(same[..., None, None, None], left + 0.1 * right, right)  # matching pairs are near-copies
        forward = graph_if(net, graphed, left[0])
        outputs = []
        with torch.no_grad():
            for i in range(STEPS):
                if clone:
                    e_left = forward(left[i]).clone()
                else:
                    e_left = forward(left[i])  # defect: siamese-pair
                e_right = forward(right[i])
                distance = (e_left - e_right).pow(2).sum(-1)
                accepted = distance < 0.5
                accuracy = (accepted == same[i]).float().mean()
                outputs += [distance.clone(), accuracy.reshape(1)]
        synchronize()
        return outputs

    compare(name, run)


class DecoderStep(nn.Module):
    def __init__(self, hidden=48, vocab=20):
        super().__init__()
        self.cell = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, h):
        h = torch.tanh(self.cell(h))
        return h, self.out(h)


def decoder(name, clone):
    def run(graphed):
        reseed()
        torch.manual_seed(13)
        step = frozen(DecoderStep().to(DEVICE))
        embedding = frozen(nn.Embedding(20, 48).to(DEVICE))
        h0 = gaussian(4, 48, seed=14, n=1)[0]
        step_fn = graph_if(step, graphed, h0)
        outputs = []
        with torch.no_grad():
            h, prev, tokens = h0, None, []
            for t in range(2 * STEPS):
                h, logits = step_fn(h)
                if prev is not None:
                    change = (F.softmax(logits, -1) - F.softmax(prev, -1)).abs().sum(-1)
                    outputs.append(change.clone())
                token = logits.argmax(-1)
                tokens.append(token)
                h = h + 0.5 * embedding(token)
                if clone:
                    prev = logits.clone()
                else:
                    prev = logits  # defect: decoder-prev-logits
            outputs.append(torch.stack(tokens).float())
        synchronize()
        return outputs

    compare(name, run)


def loop_first(name, clone):
    def run(graphed):
        reseed()
        torch.manual_seed(15)
        encoder = frozen(nn.GRU(8, 16, batch_first=True).to(DEVICE))
        sequence = gaussian(4, 64, 8, seed=16, n=1)[0]
        windows = sequence.unfold(1, 16, 8).transpose(2, 3).contiguous()  # (4, 7, 16, 8) overlapping windows

        def encode(chunk):
            out, _ = encoder(chunk)
            return out[:, -1]

        encode_fn = graph_if(encode, graphed, windows[:, 0])
        outputs = []
        with torch.no_grad():
            total = torch.zeros(4, 16, device=DEVICE)
            for i in range(windows.shape[1]):
                out = encode_fn(windows[:, i])
                total = total + out
                if i == 0:
                    if clone:
                        first = out.clone()
                    else:
                        first = out  # defect: loop-first-chunk
            summary = torch.cat([first, total / windows.shape[1]], dim=-1)
            drift = (out - first).norm(dim=-1)
            outputs += [summary.clone(), drift.clone()]
        synchronize()
        return outputs

    compare(name, run)


def robustness_eval(name, consume):
    def run(graphed):
        reseed()
        model = frozen(mlp(32, 128, 64, 10, seed=17))
        xs = gaussian(64, 32, seed=18)
        noise = gaussian(64, 32, seed=19, scale=0.5)

        def predict(x):
            return F.softmax(model(x), dim=-1)

        predict_fn = graph_if(predict, graphed, xs[0])
        outputs = []
        with torch.no_grad():
            for i in range(STEPS):
                if consume:
                    conf_clean, label_clean = predict_fn(xs[i]).max(-1)
                    conf_noisy, label_noisy = predict_fn(xs[i] + noise[i]).max(-1)
                else:
                    p_clean = predict_fn(xs[i])  # defect: eval-clean-vs-noisy
                    p_noisy = predict_fn(xs[i] + noise[i])
                    conf_clean, label_clean = p_clean.max(-1)
                    conf_noisy, label_noisy = p_noisy.max(-1)
                flip_rate = (label_clean != label_noisy).float().mean()
                confidence_drop = (conf_clean - conf_noisy).mean()
                outputs.append(torch.stack([flip_rate, confidence_drop]))
        synchronize()
        return outputs

    compare(name, run)


class SmallCNN(nn.Module):
    def __init__(self, num=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, stride=2),
                                      nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(16, num)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def tta(name, consume):
    def run(graphed):
        reseed()
        torch.manual_seed(20)
        net = frozen(SmallCNN().to(DEVICE))
        images = gaussian(8, 3, 16, 16, seed=21)
        images = images + torch.linspace(-1, 1, 16, device=DEVICE)  # a left-right gradient so flips matter
        forward = graph_if(net, graphed, images[0])
        outputs = []
        with torch.no_grad():
            for i in range(STEPS):
                if consume:
                    prob = F.softmax(forward(images[i]), dim=-1)
                    prob_flip = F.softmax(forward(images[i].flip(-1)), dim=-1)
                else:
                    logits = forward(images[i])  # defect: tta-flip-average
                    logits_flip = forward(images[i].flip(-1))
                    prob, prob_flip = F.softmax(logits, dim=-1), F.softmax(logits_flip, dim=-1)
                averaged = 0.5 * (prob + prob_flip)
                outputs += [averaged.clone(), averaged.argmax(-1).float()]
        synchronize()
        return outputs

    compare(name, run)


def microbatches(name, backward_each):
    def run(graphed):
        reseed()
        model = mlp(32, 64, 10, seed=22)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        xs = gaussian(2, 16, 32, seed=23)
        ys = classes(32, 10, seed=24).view(-1, 2, 16)
        model_fn = graph_if(model, graphed, xs[0, 0])
        # .grad tensors of their own, zeroed in place: a graphed backward's gradients must not become .grad itself
        # (pytorch/pytorch#181723), or the next micro-batch's backward would overwrite the accumulated gradient
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        outputs = []
        for i in range(STEPS):
            opt.zero_grad(set_to_none=False)
            if backward_each:
                loss_a = F.cross_entropy(model_fn(xs[i, 0]), ys[i, 0]) / 2
                loss_a.backward()
                loss_b = F.cross_entropy(model_fn(xs[i, 1]), ys[i, 1]) / 2
                loss_b.backward()
                loss = loss_a.detach() + loss_b.detach()
            else:
                out_a = model_fn(xs[i, 0])  # defect: microbatch-sum-loss
                out_b = model_fn(xs[i, 1])
                loss = (F.cross_entropy(out_a, ys[i, 0]) + F.cross_entropy(out_b, ys[i, 1])) / 2
                loss.backward()
            opt.step()
            outputs.append(loss.detach().clone())
        synchronize()
        return outputs + state(model)

    compare(name, run)


MODES = {
    "ema-teacher-two-views": lambda name: ema_teacher(name, clone=False),
    "ema-teacher-two-views-clone": lambda name: ema_teacher(name, clone=True),
    "teacher-prev-batch": lambda name: teacher_prev_batch(name, consume=False),
    "teacher-prev-batch-consumed": lambda name: teacher_prev_batch(name, consume=True),
    "contrastive-query-key": lambda name: contrastive(name, clone=False),
    "contrastive-query-key-clone": lambda name: contrastive(name, clone=True),
    "siamese-pair": lambda name: siamese(name, clone=False),
    "siamese-pair-clone": lambda name: siamese(name, clone=True),
    "decoder-prev-logits": lambda name: decoder(name, clone=False),
    "decoder-prev-logits-clone": lambda name: decoder(name, clone=True),
    "loop-first-chunk": lambda name: loop_first(name, clone=False),
    "loop-first-chunk-clone": lambda name: loop_first(name, clone=True),
    "eval-clean-vs-noisy": lambda name: robustness_eval(name, consume=False),
    "eval-clean-vs-noisy-reduced": lambda name: robustness_eval(name, consume=True),
    "tta-flip-average": lambda name: tta(name, consume=False),
    "tta-flip-softmax": lambda name: tta(name, consume=True),
    "microbatch-sum-loss": lambda name: microbatches(name, backward_each=False),
    "microbatch-backward-each": lambda name: microbatches(name, backward_each=True),
}

# Each defect mode's clean twin.
TWINS = {
    "ema-teacher-two-views": "ema-teacher-two-views-clone",
    "teacher-prev-batch": "teacher-prev-batch-consumed",
    "contrastive-query-key": "contrastive-query-key-clone",
    "siamese-pair": "siamese-pair-clone",
    "decoder-prev-logits": "decoder-prev-logits-clone",
    "loop-first-chunk": "loop-first-chunk-clone",
    "eval-clean-vs-noisy": "eval-clean-vs-noisy-reduced",
    "tta-flip-average": "tta-flip-softmax",
    "microbatch-sum-loss": "microbatch-backward-each",
}

# The contract term each defect mode breaks.
TERMS = {mode: "held-output" for mode in TWINS}

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--cpu-check":
        DEVICE = "cpu"
        CPU_CHECK = True
    deterministic()
    MODES[sys.argv[1]](sys.argv[1])
