"""PyTorch programs for the Python probe's GPU tests (tests/gpu/python_probe_gpu_test.cc), one per mode (argv[1]).
Lines the tests expect a finding at end in "# defect: MODE"; the tests read them from this file.

  tensor-cuda        torch.tensor(0.7).cuda() inside torch.cuda.graph, the exception caught silently
  private-generator  random numbers from an unregistered torch.Generator inside a capture, caught silently
  default-stream     CUDAGraph.capture_begin on the default stream, caught silently
  compile-churn      torch.compile(mode="reduce-overhead") on a clean loop whose batch size changes every 10 steps
  compile-overwritten  a static-cache decode loop under reduce-overhead that keeps its logits without a copy and
                     reads them after later runs (dies of inductor's "overwritten by a subsequent run")
  timm-resnet        clean: timm's ResNet-18 (dropout before the head) trained through make_graphed_callables
                     under bf16 autocast
  hf-bert-eager-mask a Hugging Face BERT classifier (eager attention, with a mask) graphed by make_graphed_callables:
                     transformers builds the mask inside the capture (a capture failure deep in a library)
  hf-gpt2            clean: Hugging Face GPT-2 (tiny random config, dropout on) trained the same way
  timm-resnet-fp32   clean: timm's ResNet-18 without dropout, trained in float32 (TF32 as PyTorch allows it)
  hf-gpt2-nodrop     clean: the GPT-2 with dropout off, under bf16 autocast
  frozen-scale       a module graphed by make_graphed_callables whose forward multiplies by a Python attribute
                     that the program changes every step (the graph keeps the value it had at capture)
  hang               a graph that spins on the GPU for a minute, replayed and synchronized (--hang-timeout ends it)
  buffer-rebound     a module graphed by make_graphed_callables whose forward rebinds a step-count buffer
                     (`self.steps = self.steps + 1`): the graph adds one to the tensor it captured, every replay
  param-rebound      a parameter of a module graphed by make_graphed_callables replaced by a new nn.Parameter (a
                     checkpoint reloaded by rebinding), then trained
  static-input-rebound  a manual capture whose static input is rebound (`static_x = batch`) before each replay
  outputs-kept       a manual capture whose output is appended to a list after each replay, without a copy
  manual-clean       clean: the same manual capture, inputs copied in and outputs cloned
  private-pools      three layers captured one after another, each into its own private pool (about 128 MiB each)
  shared-pool        clean: the same three captures sharing one pool, replayed in capture order
  replay-order       the three captures sharing one pool, replayed 1, 3, 2
  ddp-recipe         clean: DistributedDataParallel (NCCL; one rank unless torchrun starts more) trained by replaying
                     one captured step, as the seeds' recipe says: DDP built under a side stream, 11 warmup iterations
  ddp-timm-resnet    clean: the same with timm's ResNet-18
  ddp-default-stream the recipe with DDP constructed on the default stream
  ddp-warmup-short   the recipe with 2 warmup iterations instead of 11
  ddp-divergent      the recipe where rank 1 also all-reduces its loss inside the capture (needs torchrun and a GPU
                     per rank: its replays leave the other ranks' collectives unpaired)
  ddp-graph-alive    the recipe ending with destroy_process_group while the graph that holds the all-reduces is alive
                     (needs torchrun and a GPU per rank: every rank waits in the teardown)
  ddp-skip-barrier   the recipe where rank 1 skips the barrier before the teardown (rank 0 waits in it for ever)
  ddp-extra-replay   the recipe where rank 0 replays the step once more after every 10th step "to log a fresh loss":
                     its extra all-reduces meet rank 1's next step's, and its last ones no partner
  ddp-log-order      the recipe with the loss all-reduced eagerly every 10th step, before the replay on rank 1 and
                     after it on rank 0: the eager all-reduce meets the graph's
  ddp-log-loss       clean: the loss all-reduced eagerly after the replay every 10th step, on every rank; trains
                     as its eager twin does
  ddp-log-side-group the ddp-log-order pattern with the loss all-reduced on a process group of its own: two NCCL
                     communicators, yet the eager all-reduce makes the current stream wait, and the replay behind it
                     waits for a partner the other rank issues after its own replay
  ddp-capture-order  the recipe where every rank broadcasts a flag inside the capture, rank 1 before the backward and
                     rank 0 after it: the captures hold their collectives in another order
"""
import contextlib
import sys

import torch
import torch.cuda.nvtx as nvtx


def side_stream_warmup(fn, iterations=3):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def caught_capture(body):
    """Captures `body`; the program catches what capture raises and goes on, printing nothing (only the probe sees it)."""
    x = torch.randn(16, 64, device="cuda")
    side_stream_warmup(lambda: x * 2)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            body(x)
    except Exception:
        pass
    torch.cuda.synchronize()


def tensor_cuda():
    caught_capture(lambda x: x * torch.tensor(0.7).cuda())  # defect: tensor-cuda


def private_generator():
    generator = torch.Generator(device="cuda")
    generator.manual_seed(1)
    caught_capture(lambda x: torch.bernoulli(torch.full_like(x, 0.5), generator=generator))  # defect: private-generator


def default_stream():
    graph = torch.cuda.CUDAGraph()
    torch.zeros(1, device="cuda")
    try:
        graph.capture_begin()  # defect: default-stream
    except Exception:
        pass


def compile_churn():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64)).cuda()
    compiled = torch.compile(model, mode="reduce-overhead")
    with torch.no_grad():
        for step in range(40):
            batch = 8 * (1 + step // 10)
            nvtx.range_push("step")
            compiled(torch.randn(batch, 64, device="cuda"))  # defect: compile-churn
            nvtx.range_pop()
    torch.cuda.synchronize()


def compile_overwritten():
    torch.manual_seed(0)
    embed = torch.nn.Embedding(100, 64).cuda()
    head = torch.nn.Linear(64, 100).cuda()
    cache = torch.zeros(16, 64, device="cuda")  # a static KV-like cache, updated in place outside the graph

    @torch.compile(mode="reduce-overhead")
    def decode(token, position):
        hidden = embed(token) + cache[:position.shape[0]].sum(0)
        return head(torch.tanh(hidden))

    logits_history = []
    with torch.no_grad():
        for position in range(8):
            token = torch.full((1,), position, dtype=torch.long, device="cuda")
            logits = decode(token, torch.ones(4, device="cuda"))
            logits_history.append(logits)  # kept without .clone(): the next run overwrites it
            cache[position].fill_(0.01 * position)
        print(torch.stack(logits_history).sum())  # defect: compile-overwritten


def graphed_training(model, make_input, steps=20, bf16=True):
    """make_graphed_callables under bf16 autocast (cache off, as PyTorch requires) or in float32, then a training loop
    in NVTX train_step ranges with no host synchronization in it."""
    def precision():
        return torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False) if bf16 else contextlib.nullcontext()

    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    sample = make_input()
    with precision():
        graphed = torch.cuda.make_graphed_callables(model, (sample,))
    for _ in range(steps):
        nvtx.range_push("train_step")
        batch = make_input()
        optimizer.zero_grad(set_to_none=True)
        with precision():
            out = graphed(batch)
        out.float().square().mean().backward()
        optimizer.step()
        nvtx.range_pop()
    torch.cuda.synchronize()
    print("trained", flush=True)


def timm_resnet(drop_rate=0.2, bf16=True):
    import timm

    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=10, drop_rate=drop_rate).cuda().train()
    graphed_training(model, lambda: torch.randn(16, 3, 64, 64, device="cuda"), bf16=bf16)


def hf_gpt2(dropout=0.1):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=64, vocab_size=512, n_positions=64, resid_pdrop=dropout,
                        embd_pdrop=dropout, attn_pdrop=dropout)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = GPT2LMHeadModel(config)

        def forward(self, ids):
            return self.model(input_ids=ids, use_cache=False).logits

    graphed_training(Logits().cuda().train(), lambda: torch.randint(0, 512, (8, 32), device="cuda"))


def hf_bert_eager_mask():
    """A Hugging Face BERT classifier with its eager attention and an attention mask, graphed whole: transformers
    builds the mask inside the capture (a pageable host-to-device copy of torch.tensor(0.0, device=...)), deep in its
    own code; the finding must still name the program's line that called the model."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                        vocab_size=512, max_position_embeddings=64, num_labels=3, attn_implementation="eager")

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = BertForSequenceClassification(config)

        def forward(self, ids, mask):
            return self.model(input_ids=ids, attention_mask=mask).logits  # defect: hf-bert-eager-mask

    model = Classifier().cuda()
    ids = torch.randint(1, 512, (8, 32), device="cuda")
    mask = torch.ones(8, 32, dtype=torch.long, device="cuda")
    torch.cuda.make_graphed_callables(model, (ids, mask))


SERVED_SIZES = [1, 2, 4, 8, 3, 8, 16, 5, 8, 2, 16, 12, 4, 8, 1, 16] * 15  # 240 calls of 8 sizes


def serve_bert_plan():
    """An eager serving loop whose batch sizes vary: a Hugging Face BERT called with keyword tensors, for `graphcheck
    run --plan`. Its outermost calls are sent and none of the calls nested in them; `graphcheck plan` buckets
    input_ids' batch dimension, the mask following it."""
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                        vocab_size=512, max_position_embeddings=64)
    model = BertModel(config).cuda().eval()
    ids = torch.randint(1, 512, (max(SERVED_SIZES), 32), device="cuda")
    mask = torch.ones_like(ids)
    with torch.no_grad():
        for b in SERVED_SIZES:
            model(input_ids=ids[:b], attention_mask=mask[:b])  # call: serve-bert-plan
            torch.cuda.synchronize()


def param_rebound():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64)).cuda()
    graphed = torch.cuda.make_graphed_callables(model, (torch.randn(16, 64, device="cuda"),))
    model[0].weight = torch.nn.Parameter(model[0].weight.detach().clone())  # a checkpoint reloaded by rebinding
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(5):
        optimizer.zero_grad(set_to_none=True)
        out = graphed(torch.randn(16, 64, device="cuda"))  # defect: param-rebound
        out.square().mean().backward()
        optimizer.step()
    torch.cuda.synchronize()


def frozen_scale():
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(64, 64)
            self.scale = 1.0

        def forward(self, x):
            return self.linear(x) * self.scale

    torch.manual_seed(0)
    model = Scaled().cuda()
    graphed = torch.cuda.make_graphed_callables(model, (torch.randn(16, 64, device="cuda"),))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(6):
        model.scale = 1.0 + 0.5 * step  # a per-step schedule: the graph keeps 1.0
        optimizer.zero_grad(set_to_none=True)
        out = graphed(torch.randn(16, 64, device="cuda"))  # defect: frozen-scale
        out.square().mean().backward()
        optimizer.step()
    torch.cuda.synchronize()


def buffer_rebound():
    class Counted(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(64, 64)
            self.register_buffer("steps", torch.zeros(()))

        def forward(self, x):
            self.steps = self.steps + 1  # rebinds: the graph reads what it captured  # defect: buffer-rebound
            return self.linear(x) / self.steps

    torch.manual_seed(0)
    model = Counted().cuda()
    graphed = torch.cuda.make_graphed_callables(model, (torch.randn(16, 64, device="cuda"),))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(6):
        optimizer.zero_grad(set_to_none=True)
        out = graphed(torch.randn(16, 64, device="cuda"))
        out.square().mean().backward()
        optimizer.step()
    torch.cuda.synchronize()


def hang():
    """A graph of a kernel that spins for about a minute, replayed, then waited for."""
    minute = 60 * 2_000_000_000  # cycles, at about 2 GHz
    side_stream_warmup(lambda: torch.cuda._sleep(1000))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch.cuda._sleep(minute)
    graph.replay()
    torch.cuda.synchronize()  # defect: hang


def manual_capture(rebind_input, keep_outputs):
    """A model captured with torch.cuda.graph and replayed on new batches; the flags plant the two defects."""
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64).cuda()
    static_x = torch.randn(16, 64, device="cuda")
    side_stream_warmup(lambda: model(static_x))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    kept = []
    for _ in range(8):
        batch = torch.randn(16, 64, device="cuda")
        if rebind_input:
            static_x = batch
            graph.replay()  # defect: static-input-rebound
        elif keep_outputs:
            static_x.copy_(batch)
            graph.replay()  # defect: outputs-kept
        else:
            static_x.copy_(batch)
            graph.replay()
        kept.append(static_y if keep_outputs else static_y.clone())
    print(float(torch.stack(kept).sum()), flush=True)


def sequential_graphs(share_pool, order=(0, 1, 2)):
    """Three wide layers, each captured into its own graph in turn, then replayed in `order`; prints the memory
    PyTorch reserved for them. Each graph's 32 MiB activations are freed inside its capture and its output is small,
    so a shared pool reuses the activations' blocks and private pools hold them three times."""
    torch.manual_seed(0)
    layers = [torch.nn.Linear(4096, 4096).cuda() for _ in range(3)]
    static_x = torch.randn(2048, 4096, device="cuda")
    side_stream_warmup(lambda: [layer(static_x).relu().mul(2).sum(dim=1) for layer in layers])
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # torch.cuda.graph empties the cache on entering: measure from the same point
    before = torch.cuda.memory_reserved()
    graphs, pool = [], torch.cuda.graph_pool_handle() if share_pool else None
    with torch.no_grad():
        for layer in layers:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=pool):  # defect: private-pools
                static_y = layer(static_x).relu().mul(2).sum(dim=1)
            graphs.append((graph, static_y))
    for index in order:
        if index == 1 and order != (0, 1, 2):
            graphs[index][0].replay()  # defect: replay-order
        else:
            graphs[index][0].replay()
    torch.cuda.synchronize()
    print("reserved for graphs: %.0f MiB" % ((torch.cuda.memory_reserved() - before) / 2**20), flush=True)
    pools = {}
    for segment in torch.cuda.memory._snapshot()["segments"]:
        pool = tuple(segment.get("segment_pool_id", (0, 0)))
        if pool != (0, 0):
            pools[pool] = pools.get(pool, 0) + segment["total_size"]
    print("graph pools (torch.cuda.memory._snapshot): %s MiB" %
          ", ".join("%.0f" % (size / 2**20) for size in pools.values()), flush=True)


def inference_generator():
    """Generator state made under torch.inference_mode() (a capture there, and a cloned state installed afterwards),
    then dropout through make_graphed_callables: what Megatron's _ensure_generator_state_is_cudagraph_safe repairs.
    torch 2.11 captures and replays it with fresh masks, so nothing is to be reported."""
    torch.cuda.init()  # default_generators is empty until CUDA is initialized
    torch.manual_seed(0)
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    with torch.inference_mode():
        x = torch.ones(64, device="cuda")
        side_stream_warmup(lambda: torch.nn.functional.dropout(x, 0.5))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            torch.nn.functional.dropout(x, 0.5)
        graph.replay()
        state = generator.clone_state()
    generator.graphsafe_set_state(state)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Dropout(0.5)).cuda()
    sample = torch.randn(8, 64, device="cuda", requires_grad=True)
    graphed = torch.cuda.make_graphed_callables(model, (sample,))
    first = graphed(sample).detach().clone()
    second = graphed(sample).detach().clone()
    torch.cuda.synchronize()
    print("masks differ between replays:", not torch.equal(first, second), flush=True)


def ddp_model(model_name, device, on_default_stream=False):
    """The DDP model of ddp_training, from seed 0, built under a side stream (or on the default stream), with its SGD
    optimizer, loss and a function that draws a batch. Returns (ddp, optimizer, loss_fn, make_batch, side)."""
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(0)
    if model_name == "timm-resnet":
        import timm

        model = timm.create_model("resnet18", pretrained=False, num_classes=10).cuda().train()
        shape, batch = (3, 64, 64), 16
    else:
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
        shape, batch = (256,), 64

    def make_batch():
        return torch.randn(batch, *shape, device="cuda"), torch.randint(0, 10, (batch,), device="cuda")

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    if on_default_stream:
        ddp = DistributedDataParallel(model, device_ids=[device])  # defect: ddp-default-stream
    else:
        with torch.cuda.stream(side):
            ddp = DistributedDataParallel(model, device_ids=[device])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    return ddp, optimizer, torch.nn.CrossEntropyLoss(), make_batch, side


def ddp_eager_steps(ddp, optimizer, loss_fn, make_batch, side, static, warmup, steps, mark_steps=False):
    """On the side stream: `warmup` steps on the static batch, then `steps` on new batches (each an NVTX "step" when
    `mark_steps`)."""
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            optimizer.zero_grad(set_to_none=True)
            loss_fn(ddp(static[0]), static[1]).backward()
            optimizer.step()
        for _ in range(steps):
            if mark_steps:
                nvtx.range_push("step")
            x, y = make_batch()
            optimizer.zero_grad(set_to_none=True)
            loss_fn(ddp(x), y).backward()
            optimizer.step()
            if mark_steps:
                nvtx.range_pop()
    torch.cuda.current_stream().wait_stream(side)


def ddp_eager_twin(model_name, device, warmup, baseline, steps):
    """ddp_training's run without a graph, from the same seeds: the same warmup and baseline steps, then `steps` eager
    steps on the batches the replays were given. Returns the parameters it ends with."""
    ddp, optimizer, loss_fn, make_batch, side = ddp_model(model_name, device)
    ddp_eager_steps(ddp, optimizer, loss_fn, make_batch, side, make_batch(), warmup, baseline + steps)
    return [p.detach().clone() for p in ddp.parameters()]


def ddp_training(model_name="mlp", on_default_stream=False, warmup=11, steps=30, divergent_rank=None, baseline=0,
                 teardown="clean", extra_replay_rank=None, log_loss=None, broadcast_first_rank=None,
                 log_group="world", eager_twin=False):
    """Whole-step capture of DistributedDataParallel training (forward, backward with DDP's all-reduce, optimizer
    step), then replays on new batches copied into the static inputs, each replay an NVTX "step" (and `baseline`
    eager steps before the capture, for the speedup). A capture that fails ends the program (status 1), as it would a
    training job. `teardown`: "clean" deletes the graph before destroy_process_group (a graph holding NCCL work keeps
    the communicator from being torn down), "graph-alive" keeps it, "skip-barrier" has rank 1 skip the barrier before
    the teardown. `extra_replay_rank`: that rank replays once more after every 10th step. `log_loss`: every 10th step
    all-reduces the loss eagerly, "after" the replay on every rank or in "rank-order" (before it on rank 1), on the
    world's process group or, with `log_group` "side", on one of its own. `broadcast_first_rank`: every rank
    broadcasts a flag inside the capture, that rank before the backward, the others after the optimizer step.
    `eager_twin`: then trains ddp_eager_twin and prints the largest difference of the parameters from it."""
    import faulthandler
    import os

    import torch.distributed as dist

    # A job the tests' bound (150 s) ends says where each rank was: every thread's Python stack on stderr at 100 s.
    faulthandler.dump_traceback_later(100, exit=False)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(20000 + os.getpid() % 20000))
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    device = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=torch.device("cuda", device))
    logging_group = dist.new_group() if log_group == "side" else None
    ddp, optimizer, loss_fn, make_batch, side = ddp_model(model_name, device, on_default_stream)
    static_x, static_y = make_batch()
    ddp_eager_steps(ddp, optimizer, loss_fn, make_batch, side, (static_x, static_y), warmup, baseline, mark_steps=True)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    try:
        with torch.cuda.graph(graph):
            static_loss = loss_fn(ddp(static_x), static_y)  # defect: ddp-warmup-short
            flag = torch.ones(1, device="cuda")
            if broadcast_first_rank is not None and dist.get_rank() == broadcast_first_rank:
                dist.broadcast(flag, src=0)  # defect: ddp-capture-order
            static_loss.backward()
            optimizer.step()
            if broadcast_first_rank is not None and dist.get_rank() != broadcast_first_rank:
                dist.broadcast(flag, src=0)
            if dist.get_rank() == divergent_rank:
                dist.all_reduce(static_loss.detach().clone())
    except Exception as error:
        print("capture failed:", type(error).__name__, str(error).splitlines()[0], flush=True)
        dist.destroy_process_group()  # as PyTorch asks before exiting (bounded under --hang-timeout if NCCL stalls)
        sys.exit(1)
    logged = torch.zeros(1, device="cuda")
    for step in range(1, steps + 1):
        nvtx.range_push("step")
        x, y = make_batch()
        static_x.copy_(x)
        static_y.copy_(y)
        log_before = log_loss == "rank-order" and dist.get_rank() == 1 and step % 10 == 0
        if log_before:
            logged.copy_(static_loss.detach())
            dist.all_reduce(logged, group=logging_group)  # defect: ddp-log-order
        graph.replay()
        nvtx.range_pop()
        if log_loss is not None and step % 10 == 0 and not log_before:
            logged.copy_(static_loss.detach())
            dist.all_reduce(logged, group=logging_group)
        if dist.get_rank() == extra_replay_rank and step % 10 == 0:
            graph.replay()  # defect: ddp-extra-replay
    torch.cuda.synchronize()
    print("loss after %d replays: %.4f" % (steps, static_loss.item()), flush=True)
    if eager_twin:
        expected = ddp_eager_twin(model_name, device, warmup, baseline, steps)
        difference = max((p.detach() - e).abs().max().item() for p, e in zip(ddp.parameters(), expected))
        print("graphed vs eager: max difference %.4g" % difference, flush=True)
    if teardown == "graph-alive":
        dist.destroy_process_group()  # defect: ddp-graph-alive
        return
    del graph
    torch.cuda.synchronize()
    if teardown == "skip-barrier":
        if dist.get_rank() != 1:
            dist.barrier()  # defect: ddp-skip-barrier
    dist.destroy_process_group()


MODES = {"hf-bert-eager-mask": hf_bert_eager_mask, "tensor-cuda": tensor_cuda, "private-generator": private_generator, "default-stream": default_stream,
         "compile-churn": compile_churn, "compile-overwritten": compile_overwritten, "timm-resnet": timm_resnet,
         "hf-gpt2": hf_gpt2, "param-rebound": param_rebound,
         "timm-resnet-fp32": lambda: timm_resnet(drop_rate=0.0, bf16=False),
         "hf-gpt2-nodrop": lambda: hf_gpt2(dropout=0.0), "frozen-scale": frozen_scale,
         "buffer-rebound": buffer_rebound, "hang": hang,
         "static-input-rebound": lambda: manual_capture(rebind_input=True, keep_outputs=False),
         "outputs-kept": lambda: manual_capture(rebind_input=False, keep_outputs=True),
         "manual-clean": lambda: manual_capture(rebind_input=False, keep_outputs=False),
         "private-pools": lambda: sequential_graphs(share_pool=False),
         "shared-pool": lambda: sequential_graphs(share_pool=True),
         "replay-order": lambda: sequential_graphs(share_pool=True, order=(0, 2, 1)),
         "inference-generator": inference_generator, "serve-bert-plan": serve_bert_plan,
         "ddp-recipe": lambda: ddp_training(baseline=20),
         "ddp-timm-resnet": lambda: ddp_training("timm-resnet", baseline=20),
         "ddp-graph-alive": lambda: ddp_training(teardown="graph-alive"),
         "ddp-skip-barrier": lambda: ddp_training(teardown="skip-barrier"),
         "ddp-default-stream": lambda: ddp_training(on_default_stream=True),
         "ddp-warmup-short": lambda: ddp_training(warmup=2),
         "ddp-divergent": lambda: ddp_training(divergent_rank=1),
         "ddp-extra-replay": lambda: ddp_training(extra_replay_rank=0),
         "ddp-log-order": lambda: ddp_training(log_loss="rank-order"),
         "ddp-log-loss": lambda: ddp_training(log_loss="after", eager_twin=True),
         "ddp-log-side-group": lambda: ddp_training(log_loss="rank-order", log_group="side"),
         "ddp-capture-order": lambda: ddp_training(broadcast_first_rank=1)}

if __name__ == "__main__":
    MODES[sys.argv[1]]()
