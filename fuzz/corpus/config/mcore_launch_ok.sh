2#!/bin/bash
# Megatron-LM launch script: TE scoped graphs, every rule satisfied.
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export NCCL_GRAPH_REGISTER=0
torchrun --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 32 --seq-length 4096 --micro-batch-size 1 \
  --cuda-graph-impl transformer_engine --cuda-graph-scope attn mlp \
  --cuda-graph-warmup-steps 3 --te-rng-tracker \
  --disable-bias-linear
