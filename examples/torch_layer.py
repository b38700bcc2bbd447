"""sgla in a PyTorch model: a small gated linear-attention layer (a learned
per-token decay, as in Mamba2 / simple GLA) trained for a few steps on a toy
task; sgla.chunk_simple_gla is differentiable and torch.compile sees it as one
operator.  Runs on a GPU when there is one (bf16), else on the CPU (fp32).

    python3 examples/torch_layer.py"""
import torch
import torch.nn.functional as F

import sgla

torch.manual_seed(0)
dev = "cuda" if torch.cuda.is_available() and "cuda" in sgla.backends() else "cpu"
dt = torch.bfloat16 if dev == "cuda" else torch.float32


class GatedLinearAttention(torch.nn.Module):
    def __init__(self, d_model=128, heads=2, d_head=64):
        super().__init__()
        self.h, self.d = heads, d_head
        self.qkv = torch.nn.Linear(d_model, 3 * heads * d_head, bias=False)
        self.gate = torch.nn.Linear(d_model, heads)
        self.out = torch.nn.Linear(heads * d_head, d_model, bias=False)

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.h, self.d).unbind(2)
        g = F.logsigmoid(self.gate(x).float())  # log decay per token and head, <= 0
        o, _ = sgla.chunk_simple_gla(q.to(dt), k.to(dt), v.to(dt), g=g)
        return self.out(o.float().reshape(B, T, -1))


model = GatedLinearAttention().to(dev)
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
x = torch.randn(4, 256, 128, device=dev)
target = torch.roll(x, shifts=1, dims=1)  # recall the previous token: needs the state
losses = []
for step in range(30):
    loss = F.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(f"device {dev}, {dt}: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {len(losses)} steps")
assert losses[-1] < losses[0], "the loss did not go down"

# the same gradients through the float64 reference (a tiny slice, so that it is quick)
q, k, v = (torch.randn(1, 40, 2, 16, dtype=torch.float64, requires_grad=True) for _ in range(3))
g = F.logsigmoid(torch.randn(1, 40, 2, dtype=torch.float64)).requires_grad_()
print("gradcheck (float64, reference backend):",
      torch.autograd.gradcheck(lambda *a: sgla.chunk_simple_gla(*a[:3], g=a[3])[0], (q, k, v, g)))
print("ok")
