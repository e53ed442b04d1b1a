2#!/bin/bash
# Megatron-LM launch script: delayed wgrad with attention graphed, attention bias on, TE RNG tracker missing.
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
torchrun --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --seq-length 4096 --micro-batch-size 1 \
  --cuda-graph-impl transformer_engine \
  --cuda-graph-scope attn mlp \
  --delay-wgrad-compute \
  --no-gradient-accumulation-fusion \
  --add-qkv-bias
