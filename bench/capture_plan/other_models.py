"""`graphcheck run --plan` on models of other families (issue 47): eager serving loops whose batch sizes vary, for
`graphcheck plan` to find the region and its sizes. Each run prints its time per call; run each under
`graphcheck run --plan` and plan the trace (bench/capture_plan/other_models.sh).

  resnet   torchvision ResNet-18, eval, 224x224 images, called with a positional tensor
  bert     Hugging Face BERT (2 layers, from its config), eval, called with keyword tensors (input_ids, attention_mask)
"""
import sys
import time

import torch

SIZES = [1, 2, 4, 8, 3, 8, 16, 5, 8, 2, 16, 12, 4, 8, 1, 16] * 15  # 240 calls of 8 sizes


def resnet():
    import torchvision

    model = torchvision.models.resnet18().cuda().eval()
    images = torch.randn(max(SIZES), 3, 224, 224, device="cuda")
    return lambda b: model(images[:b])


def bert():
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=2, hidden_size=128, num_attention_heads=4, intermediate_size=512)
    model = BertModel(config).cuda().eval()
    ids = torch.randint(0, config.vocab_size, (max(SIZES), 64), device="cuda")
    mask = torch.ones_like(ids)
    return lambda b: model(input_ids=ids[:b], attention_mask=mask[:b]).last_hidden_state


def main(name):
    torch.manual_seed(0)
    call = {"resnet": resnet, "bert": bert}[name]()
    with torch.no_grad():
        torch.cuda.synchronize()
        started = time.perf_counter()
        for b in SIZES:
            call(b)
            torch.cuda.synchronize()
    print("%s: %.1f us per call over %d calls" % (name, (time.perf_counter() - started) / len(SIZES) * 1e6,
                                                   len(SIZES)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
