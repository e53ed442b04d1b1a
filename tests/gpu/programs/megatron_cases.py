"""Megatron-Core's own CUDA graphs (megatron-core 0.19.2, no Transformer Engine) for the Megatron GPU tests
(tests/gpu/megatron_gpu_test.cc), one per mode (argv[1]). Each builds a small GPT from megatron.core.models.gpt with
the local layer spec, wrapped in Megatron's DistributedDataParallel (whose gradient buffers the graphs write into),
on one GPU (world size 1, tensor and pipeline parallel 1), and trains a few iterations, each an NVTX "step". Lines the
tests expect a finding at end in "# defect: MODE". scripts/fetch-megatron-wheels.sh fetches the wheel.

  local-clean          cuda_graph_impl="local": CudaGraphManager records each layer's graphs in the first iteration
                       and create_cudagraphs() creates them after it; the graph-safe RNG tracker
  local-schedule-clean the same trained through get_forward_backward_func(), whose schedule calls
                       create_cudagraphs() itself
  full-iteration-clean cuda_graph_impl="full_iteration": FullCudaGraphWrapper around get_forward_backward_func(), one
                       graph for the whole forward and backward, the optimizer stepping outside it
  rng-tracker          local graphs with the default RNG tracker (model_parallel_cuda_manual_seed without
                       use_cudagraphable_rng): Megatron refuses at model construction, "RNG tracker does not support
                       cudagraphs!"
  no-create-cudagraphs local-clean without the create_cudagraphs() call: the layers record their graphs and run
                       eagerly every iteration
  arg-mismatch         local-clean, then an iteration on a batch of half the sequence length: with pipeline parallel
                       size 1 Megatron looks its runners up by their arguments and raises "`cudagraph_created` is set
                       to True but no matching cudagraph runners were found" (its "CUDA graph argument mismatch"
                       raise is the pipeline-parallel path)
  sync-in-layer        local-clean with a forward hook on a layer that reads a number (.item()): the hook runs inside
                       the layer's capture, which fails
  nan-check-full-iteration  full-iteration with the loss checked for NaN as Megatron-LM's pretrain_gpt.py does under
                       --check-for-nan-in-loss-and-grad (the rerun state machine's validate_result reads the verdict
                       on the host): the capture fails
  validation-replay    local-schedule-clean with a validation pass (eval(), no_grad()) every 2 iterations: Megatron
                       replays the training graphs (dropout on) in it
  no-shared-pool       full-iteration with cuda_graph_use_single_mempool=False and an evaluation every few iterations:
                       the training and the validation graph each get a private memory pool
  pipeline-clean       under torchrun on two GPUs: pipeline parallel 2 with 2 virtual stages per rank (a layer per
                       model chunk), per-layer graphs for each microbatch (4), recorded in the first iteration and
                       created by the interleaved schedule, all in one shared pool
  pipeline-regrouped   pipeline-clean, then the schedule regrouped after the graphs were created
                       (microbatch_group_size_per_vp_stage 2 -> 4): the layers replay their graphs in another order
                       than the one they were captured in, which the shared pool requires
  tensor-parallel-clean  under torchrun on two GPUs: tensor parallel 2, per-layer graphs as local-clean (each holds
                       the tensor-parallel all-reduces of its layer; the embedding's and the loss's run eagerly),
                       dropout off, weights and two batches (used in turn) from CPU generators; rank 0 prints the
                       loss of every iteration; the graphs are reset before the teardown
  tensor-parallel-eager  tensor-parallel-clean with cuda_graph_impl="none": the eager twin, from the same seeds
  tensor-parallel-graphs-alive  tensor-parallel-clean without resetting the graphs: they stay alive holding the
                       tensor-parallel communicator's all-reduces, and destroy_process_group() waits for ever (seen
                       on two H200s)
"""
import os
import socket
import sys
from functools import partial

import torch
import torch.cuda.nvtx as nvtx
from megatron.core import parallel_state
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
from megatron.core.full_cuda_graph import FullCudaGraphWrapper
from megatron.core.models.gpt import GPTModel
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.optimizer import OptimizerConfig
from megatron.core.optimizer.optimizer import FP32Optimizer
from megatron.core.pipeline_parallel import get_forward_backward_func
from megatron.core.rerun_state_machine import RerunMode, get_rerun_state_machine, initialize_rerun_state_machine
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
from megatron.core.transformer import TransformerConfig
from megatron.core.transformer.cuda_graphs import CudaGraphManager, create_cudagraphs

# Logits of 8 x 256 x 8192 floats are 64 MiB: a validation graph in a pool of its own holds several of them, more
# than graph-memory's default threshold (64 MiB avoidable).
VOCAB, SEQ, BATCH = 8192, 256, 8
STEPS = 8


def initialize(use_cudagraphable_rng=True):
    """One process, one GPU: an NCCL process group of one rank, Megatron's model-parallel groups of size 1, and the
    seed. The graph-safe RNG tracker keeps its states in torch.Generator objects the graphs register."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    torch.cuda.set_device(0)
    torch.distributed.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1,
                                         device_id=torch.device("cuda", 0))
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1)
    if use_cudagraphable_rng:
        model_parallel_cuda_manual_seed(123, use_cudagraphable_rng=True)
    else:
        model_parallel_cuda_manual_seed(123)


def teardown():
    torch.cuda.synchronize()
    parallel_state.destroy_model_parallel()
    torch.distributed.destroy_process_group()  # defect: tensor-parallel-graphs-alive


def build_model(lr=1e-4, **config_fields):
    """The GPT (2 layers, dropout on unless `config_fields` turn it off, so that the graphs draw random numbers) in
    Megatron's DDP, and an Adam stepping on its gradient buffers (FP32Optimizer copies param.main_grad into
    param.grad, as Megatron's optimizers do). DDP is built under a side stream, as the seeds' recipe for graphed DDP
    says: the gradient accumulators it keeps belong to the stream they were made on, and a capture must not reach the
    default stream."""
    fields = dict(num_layers=2, hidden_size=256, num_attention_heads=4, hidden_dropout=0.1, attention_dropout=0.1,
                  cuda_graph_modules=[])
    fields.update(config_fields)
    config = TransformerConfig(**fields)
    spec = get_gpt_layer_local_spec()
    gpt = GPTModel(config=config, transformer_layer_spec=spec, vocab_size=VOCAB,  # defect: rng-tracker
                   max_sequence_length=SEQ)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        model = DistributedDataParallel(config=config, ddp_config=DistributedDataParallelConfig(), module=gpt.cuda())
    torch.cuda.current_stream().wait_stream(side)
    optimizer = FP32Optimizer(torch.optim.Adam(model.parameters(), lr=lr), OptimizerConfig(lr=lr, clip_grad=0.0),
                              lambda _: None)
    return config, model, optimizer


def make_batch(seq=SEQ, generator=None):
    """Random tokens from the default CUDA generator, or from `generator` (a CPU one) where the run must not depend
    on what else drew from the default generator."""
    if generator is None:
        tokens = torch.randint(0, VOCAB, (BATCH, seq), device="cuda")
    else:
        tokens = torch.randint(0, VOCAB, (BATCH, seq), generator=generator).cuda()
    return {"tokens": tokens, "labels": torch.roll(tokens, -1, dims=1),
            "position_ids": torch.arange(seq, device="cuda").repeat(BATCH, 1),
            "loss_mask": torch.ones(BATCH, seq, device="cuda")}


def batches():
    while True:
        yield make_batch()


def language_model_loss(model, batch):
    losses = model(batch["tokens"], batch["position_ids"], None, labels=batch["labels"])  # defect: no-create-cudagraphs
    return (losses.float() * batch["loss_mask"]).sum() / batch["loss_mask"].sum()


def train_layers(create_graphs=True, shorter_last_batch=False, hook_layer=False):
    """Per-layer graphs through a hand-written loop: the first iteration records each layer's graphs, then
    create_cudagraphs() warms up and captures them (forward and backward of each layer, in one shared pool), and the
    layers replay them from the second iteration on."""
    initialize()
    _, model, optimizer = build_model(cuda_graph_impl="local", cuda_graph_warmup_steps=2)
    if hook_layer:
        model.module.decoder.layers[1].register_forward_hook(log_output_norm)
    for step in range(STEPS):
        nvtx.range_push("step")
        model.zero_grad_buffer()
        optimizer.zero_grad()
        loss = language_model_loss(model, make_batch())
        loss.backward()
        model.finish_grad_sync()
        optimizer.step()
        nvtx.range_pop()
        if step == 0 and create_graphs:
            create_cudagraphs()
    if shorter_last_batch:
        batch = make_batch(SEQ // 2)
        model(batch["tokens"], batch["position_ids"], None, labels=batch["labels"])  # defect: arg-mismatch
    print("loss after %d iterations: %.4f" % (STEPS, loss.item()), flush=True)
    teardown()


def log_output_norm(layer, args, output):
    """A debugging hook on a graphed layer: reading the norm on the host synchronizes inside the layer's capture."""
    layer.output_norm = output[0].norm().item()  # defect: sync-in-layer


def loss_func(loss_mask, output_tensor, check_for_nan=False):
    """As Megatron-LM's pretrain_gpt.py: the mean of the token losses, checked for NaN when asked."""
    loss = (output_tensor.float() * loss_mask).sum() / loss_mask.sum()
    if check_for_nan:
        checker = get_rerun_state_machine()
        checker.validate_result(result=loss, rejection_func=torch.isnan,  # defect: nan-check-full-iteration
                                message="found NaN in local forward loss calculation", tolerance=0.0, fatal=True)
    return loss, {"lm loss": loss.detach()}


def forward_step(data_iterator, model, check_for_nan=False):
    batch = next(data_iterator)
    output = model(batch["tokens"], batch["position_ids"], None, labels=batch["labels"])
    return output, partial(loss_func, batch["loss_mask"], check_for_nan=check_for_nan)


def train_schedule(full_iteration, check_for_nan=False, single_mempool=True, evaluate_every=0):
    """Training through Megatron's schedule, as Megatron-LM's train_step does: get_forward_backward_func() (for
    cuda_graph_impl="local" it calls create_cudagraphs() at its end), wrapped in FullCudaGraphWrapper for
    full-iteration graphs (eager for cuda_graph_warmup_steps iterations, then captured, then replayed)."""
    initialize()
    if check_for_nan:
        initialize_rerun_state_machine(mode=RerunMode.DISABLED)
    impl = "full_iteration" if full_iteration else "local"
    config, model, optimizer = build_model(cuda_graph_impl=impl, cuda_graph_warmup_steps=2,
                                           cuda_graph_use_single_mempool=single_mempool)
    forward_backward = get_forward_backward_func()
    if full_iteration:
        forward_backward = FullCudaGraphWrapper(forward_backward,
                                                cuda_graph_warmup_steps=config.cuda_graph_warmup_steps,
                                                use_single_mempool=config.cuda_graph_use_single_mempool)
    step_func = partial(forward_step, check_for_nan=check_for_nan)
    data = batches()
    for step in range(STEPS):
        nvtx.range_push("step")
        model.zero_grad_buffer()
        optimizer.zero_grad()
        losses = forward_backward(forward_step_func=step_func, data_iterator=data,  # defect: no-shared-pool
                                  model=model, num_microbatches=1, seq_length=SEQ, micro_batch_size=BATCH,
                                  forward_only=False)
        model.finish_grad_sync()
        optimizer.step()
        nvtx.range_pop()
        if evaluate_every and (step + 1) % evaluate_every == 0:
            model.eval()  # defect: validation-replay
            with torch.no_grad():
                forward_backward(forward_step_func=step_func, data_iterator=data, model=model,
                                 num_microbatches=1, seq_length=SEQ, micro_batch_size=BATCH, forward_only=True)
            model.train()
    print("loss after %d iterations: %.4f" % (STEPS, losses[0]["lm loss"].item()), flush=True)
    teardown()


def initialize_job(**parallel_sizes):
    """One process per GPU under torchrun: Megatron's model-parallel groups of `parallel_sizes`, the graph-safe RNG
    (the default generator gets the same seed on every tensor-parallel rank, so the ranks draw the same batches)."""
    device = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(device)
    torch.distributed.init_process_group("nccl", device_id=torch.device("cuda", device))
    parallel_state.initialize_model_parallel(**parallel_sizes)
    model_parallel_cuda_manual_seed(123, use_cudagraphable_rng=True)


def initialize_pipeline():
    initialize_job(tensor_model_parallel_size=1, pipeline_model_parallel_size=2, virtual_pipeline_model_parallel_size=2)


def train_tensor_parallel(graphed=True, reset_graphs=True):
    """Tensor parallel 2 on two GPUs: each layer's column- and row-parallel linears all-reduce inside its graphs, the
    vocabulary-parallel embedding and loss all-reduce eagerly. Without dropout, on two fixed batches in turn (the
    same on both ranks, from a CPU generator) and a learning rate the loss falls with, the graphed run and its eager
    twin (graphed=False) compute the same losses, which rank 0 prints for the test to compare."""
    initialize_job(tensor_model_parallel_size=2, pipeline_model_parallel_size=1)
    impl = dict(cuda_graph_impl="local", cuda_graph_warmup_steps=2) if graphed else dict(cuda_graph_impl="none")
    _, model, optimizer = build_model(tensor_model_parallel_size=2, hidden_dropout=0.0, attention_dropout=0.0,
                                      lr=1e-3, **impl)
    set_weights(model, torch.distributed.get_rank())
    generator = torch.Generator().manual_seed(7)
    fixed = [make_batch(generator=generator) for _ in range(2)]
    losses = []
    for step in range(STEPS):
        nvtx.range_push("step")
        model.zero_grad_buffer()
        optimizer.zero_grad()
        loss = language_model_loss(model, fixed[step % 2])
        loss.backward()
        model.finish_grad_sync()
        optimizer.step()
        nvtx.range_pop()
        losses.append(loss.detach())
        if step == 0 and graphed:
            create_cudagraphs()
    if torch.distributed.get_rank() == 0:
        print("losses: " + " ".join("%.6f" % l.item() for l in losses), flush=True)
    if graphed and reset_graphs:
        reset_layer_graphs(model)
    teardown()


def reset_layer_graphs(model):
    """Resets every graph of the model's layers before the teardown. Megatron's delete_cuda_graphs() walks
    _CudagraphGlobalRecord.cudagraph_record, which create_cudagraphs() empties once the graphs exist (0.19.2), so it
    frees none of them: they stay alive holding the tensor-parallel all-reduces (4 graphs alive at
    destroy_process_group on two H200s)."""
    for module in model.modules():
        if isinstance(module, CudaGraphManager):
            for runner in module.cudagraph_runners:
                for graph in (runner.fwd_graph, runner.bwd_graph):
                    if graph is not None:
                        graph.reset()


def set_weights(model, rank):
    """Overwrites every matrix of the model with values from CPU generators, so that the graphed run and its eager
    twin start from the same weights whatever their construction drew (their first losses, both computed eagerly,
    differed by 7e-4 on two H200s). A tensor-parallel shard draws from its rank's generator; a matrix every rank
    holds whole (the position embedding) draws from one generator all ranks share, so the ranks agree on it."""
    shared = torch.Generator().manual_seed(100)
    own = torch.Generator().manual_seed(200 + rank)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() >= 2:
                generator = own if getattr(parameter, "tensor_model_parallel", False) else shared
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.02)


def build_pipeline_chunks():
    """This rank's two model chunks of a 4-layer GPT (a layer each), each in Megatron's DDP (built under a side
    stream, as build_model does), and one Adam over both."""
    config = TransformerConfig(num_layers=4, hidden_size=256, num_attention_heads=4, hidden_dropout=0.1,
                               attention_dropout=0.1, pipeline_model_parallel_size=2,
                               virtual_pipeline_model_parallel_size=2, pipeline_dtype=torch.float32,
                               cuda_graph_impl="local", cuda_graph_warmup_steps=2, cuda_graph_modules=[])
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    chunks = []
    for vp_stage in range(2):
        gpt = GPTModel(config=config, transformer_layer_spec=get_gpt_layer_local_spec(), vocab_size=VOCAB,
                       max_sequence_length=SEQ, share_embeddings_and_output_weights=False, vp_stage=vp_stage,
                       pre_process=parallel_state.is_pipeline_first_stage(ignore_virtual=False, vp_stage=vp_stage),
                       post_process=parallel_state.is_pipeline_last_stage(ignore_virtual=False, vp_stage=vp_stage))
        with torch.cuda.stream(side):
            chunks.append(DistributedDataParallel(config=config, ddp_config=DistributedDataParallelConfig(),
                                                  module=gpt.cuda(), disable_bucketing=vp_stage > 0))
    torch.cuda.current_stream().wait_stream(side)
    parameters = [p for chunk in chunks for p in chunk.parameters()]
    optimizer = FP32Optimizer(torch.optim.Adam(parameters, lr=1e-4), OptimizerConfig(lr=1e-4, clip_grad=0.0),
                              lambda _: None)
    return config, chunks, optimizer


def train_pipeline(regroup_after_graphs=False):
    """The interleaved 1F1B schedule over 4 microbatches. Its first iteration records each layer's graphs, one runner
    per microbatch, in execution order, and create_cudagraphs() at its end captures them in that order into one pool;
    later iterations replay them. With regroup_after_graphs, the iterations after the first group 4 microbatches per
    virtual stage instead of 2: every layer still sees microbatches 0-3 in turn, but the layers of the two chunks
    interleave differently than when the graphs were captured."""
    initialize_pipeline()
    config, chunks, optimizer = build_pipeline_chunks()
    forward_backward = get_forward_backward_func()
    data = [batches() for _ in chunks]
    losses = []
    for step in range(STEPS):
        nvtx.range_push("step")
        for chunk in chunks:
            chunk.zero_grad_buffer()
        optimizer.zero_grad()
        losses = forward_backward(forward_step_func=forward_step, data_iterator=data,  # defect: pipeline-regrouped
                                  model=chunks, num_microbatches=4, seq_length=SEQ, micro_batch_size=BATCH,
                                  forward_only=False)
        for chunk in chunks:
            chunk.finish_grad_sync()
        optimizer.step()
        nvtx.range_pop()
        if step == 0 and regroup_after_graphs:
            config.microbatch_group_size_per_vp_stage = 4
    if losses:
        print("rank %d loss after %d iterations: %.4f" % (torch.distributed.get_rank(), STEPS,
                                                         losses[-1]["lm loss"].item()), flush=True)
    teardown()


def refused_tracker():
    initialize(use_cudagraphable_rng=False)
    build_model(cuda_graph_impl="local")
    teardown()


MODES = {
    "local-clean": train_layers,
    "local-schedule-clean": lambda: train_schedule(full_iteration=False),
    "full-iteration-clean": lambda: train_schedule(full_iteration=True),
    "rng-tracker": refused_tracker,
    "no-create-cudagraphs": lambda: train_layers(create_graphs=False),
    "arg-mismatch": lambda: train_layers(shorter_last_batch=True),
    "sync-in-layer": lambda: train_layers(hook_layer=True),
    "nan-check-full-iteration": lambda: train_schedule(full_iteration=True, check_for_nan=True),
    "no-shared-pool": lambda: train_schedule(full_iteration=True, single_mempool=False, evaluate_every=2),
    "validation-replay": lambda: train_schedule(full_iteration=False, evaluate_every=2),
    "pipeline-clean": train_pipeline,
    "pipeline-regrouped": lambda: train_pipeline(regroup_after_graphs=True),
    "tensor-parallel-clean": train_tensor_parallel,
    "tensor-parallel-eager": lambda: train_tensor_parallel(graphed=False),
    "tensor-parallel-graphs-alive": lambda: train_tensor_parallel(reset_graphs=False),
}

if __name__ == "__main__":
    MODES[sys.argv[1]]()
