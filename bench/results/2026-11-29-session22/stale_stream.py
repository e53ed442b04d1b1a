"""Does a loss kept from an eager step (its autograd graph alive) break a later make_graphed_callables' backward capture?"""
import sys, torch
mode = sys.argv[1]
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 64, device="cuda")
for _ in range(3):
    opt.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
if mode == "del":
    del loss
try:
    g = torch.cuda.make_graphed_callables(model, (torch.randn(8, 64, device="cuda"),))
    g(x).sum().backward()
    torch.cuda.synchronize()
    print(mode, "captured OK")
except Exception as e:
    print(mode, "FAILED", type(e).__name__, str(e).splitlines()[0])
