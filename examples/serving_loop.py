"""A continuous-batching loop on sgla's state pool, as a serving engine runs it:
requests arrive with random prompt lengths, prefill in chunks, decode one token
at a time or take speculative steps whose drafts are accepted at random, then
finish and free their slots for new requests.  Every engine step is at most two
calls: one packed batch mixing prefill chunks and single decode tokens (indices
[N]), one speculative verify batch (indices [N, t_max], num_accepted_tokens).
Every finished request's outputs are checked against a run of that request
alone.  Prints progress and tokens per second.

    python3 examples/serving_loop.py [--requests 40] [--seed 0] [--device cuda]

With --device cuda (torch and a CUDA build of sgla) the pool lives on the GPU
and q, k, v are bf16, as a served model has them: prefill chunks run the
chunked kernel on their slots and decodes the recurrence, in one call.

(The toy model draws q, k, v and the gate of each token at random: the point
is the bookkeeping of the states, which sgla checks in every call.)"""
import argparse
import time

import numpy as np

import sgla

ap = argparse.ArgumentParser()
ap.add_argument("--requests", type=int, default=40)
ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--max-batch", type=int, default=8)
ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
args = ap.parse_args()
rng = np.random.default_rng(args.seed)
CUDA = args.device == "cuda"
H, K, V = (4, 64, 64) if CUDA else (4, 32, 32)  # the CUDA chunked kernel takes K, V in {64, 128, 256}
CHUNK, T_MAX = 48, 4            # prefill chunk; draft tokens of a speculative step
G = T_MAX                       # slots a request owns: one per draft token
SLOTS = args.max_batch * G
TOL = 1e-2 if CUDA else 1e-5    # bf16 outputs (and the chunked kernel's 16-bit operands) on the GPU
free_groups = list(range(args.max_batch))
if CUDA:
    import torch

    pool = torch.zeros((SLOTS, H, K, V), dtype=torch.float32, device="cuda")

    def to_dev(x, bf16=False):
        t = torch.from_numpy(np.ascontiguousarray(x)).cuda()
        return t.bfloat16() if bf16 else t

    def call(fn, q, k, v, g, cu, idx, **kw):
        """the step on the GPU: inputs over, outputs back (a real engine keeps them there)"""
        kw = {n: to_dev(x) for n, x in kw.items()}
        o, _ = fn(to_dev(q, True), to_dev(k, True), to_dev(v, True), g=to_dev(g), initial_state=pool,
                  cu_seqlens=to_dev(cu), ssm_state_indices=to_dev(idx), **kw)
        return o.float().cpu().numpy()

    def rounded(x):  # the bf16 values the GPU sees, kept for the check
        return torch.from_numpy(x).bfloat16().float().numpy()
else:
    pool = np.zeros((SLOTS, H, K, V), np.float32)

    def call(fn, q, k, v, g, cu, idx, **kw):
        o, _ = fn(q, k, v, g=g, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx, **kw)
        return o

    def rounded(x):
        return x


def new_tokens(n):
    q, k = (rounded(rng.standard_normal((n, H, K), dtype=np.float32)) for _ in range(2))
    v = rounded(rng.standard_normal((n, H, V), dtype=np.float32))
    g = -rng.uniform(0.0, 0.2, (n, H)).astype(np.float32)
    return q, k, v, g


class Request:
    def __init__(self, rid):
        self.rid = rid
        self.prompt = int(rng.integers(1, 150))
        self.gen = int(rng.integers(1, 24))
        self.spec = rng.random() < 0.5         # decodes by speculative steps
        self.done_prompt, self.done_gen = 0, 0
        self.toks = [], []                     # accepted tokens (q, k, v, g) and their outputs
        self.group, self.cur, self.started = None, 0, False

    def slots(self):
        return [self.group * G + i for i in range(G)]


pending = [Request(i) for i in range(args.requests)]
active, finished = [], []
t_start, tokens, steps, checked = time.perf_counter(), 0, 0, 0


def check(r):
    """the request alone, from a zero state, on its accepted tokens"""
    q, k, v, g = (np.stack([t[i] for t in r.toks[0]])[None] for i in range(4))
    o, _ = sgla.chunk_simple_gla(q, k, v, g=g)
    got = np.stack(r.toks[1])[None]
    err = float(np.linalg.norm(got - o) / np.linalg.norm(o))
    assert err < TOL, f"request {r.rid}: rel error {err:.2e} against a run alone"
    return got.size


while pending or active:
    while pending and free_groups and len(active) < args.max_batch:
        r = pending.pop(0)
        r.group = free_groups.pop(0)
        active.append(r)
    # ---- call 1: prefill chunks and single decode tokens, indices [N]
    batch = []
    for r in active:
        if r.done_prompt < r.prompt:
            batch.append((r, min(CHUNK, r.prompt - r.done_prompt), False))
        elif not r.spec:
            batch.append((r, 1, True))
    if batch:
        toks = [new_tokens(n) for _, n, _ in batch]
        q, k, v, g = (np.concatenate([t[i] for t in toks])[None] for i in range(4))
        cu = np.concatenate([[0], np.cumsum([n for _, n, _ in batch])])
        idx = np.array([r.slots()[r.cur] for r, _, _ in batch], np.int64)
        his = np.array([r.started for r, _, _ in batch])
        kw = {"cu_seqlens_cpu": cu} if CUDA else {}  # the host copy: the chunked grid covers the prefills
        o = call(sgla.chunk_simple_gla, q, k, v, g, cu, idx, has_initial_state=his, **kw)
        for j, (r, n, dec) in enumerate(batch):
            r.started = True
            for t in range(n):
                r.toks[0].append(tuple(x[t] for x in toks[j]))
                r.toks[1].append(o[0, cu[j] + t])
            if dec:
                r.done_gen += 1
            else:
                r.done_prompt += n
            tokens += n
    # ---- call 2: speculative steps, indices [N, t_max] with the current slot at num_accepted - 1
    spec = [r for r in active if r.done_prompt >= r.prompt and r.spec and r.done_gen < r.gen]
    if spec:
        drafts = [int(rng.integers(1, T_MAX + 1)) for _ in spec]
        toks = [new_tokens(d) for d in drafts]
        q, k, v, g = (np.concatenate([t[i] for t in toks])[None] for i in range(4))
        cu = np.concatenate([[0], np.cumsum(drafts)])
        rows, acc_prev = [], []
        for r in spec:
            s = r.slots()
            a = 1 + r.cur            # the state to continue from sits in slot s[cur]; put it at a - 1
            rows.append([s[(r.cur + i - (a - 1)) % G] for i in range(G)])
            acc_prev.append(a)
        idx = np.array(rows, np.int64)
        o = call(sgla.fused_recurrent_simple_gla, q, k, v, g, cu, idx, num_accepted_tokens=np.array(acc_prev),
                 has_initial_state=np.array([r.started for r in spec]))
        for j, r in enumerate(spec):
            r.started = True
            keep = int(rng.integers(1, drafts[j] + 1))       # the verifier accepts this many drafts
            keep = min(keep, r.gen - r.done_gen)
            for t in range(keep):
                r.toks[0].append(tuple(x[t] for x in toks[j]))
                r.toks[1].append(o[0, cu[j] + t])
            r.cur = r.slots().index(int(idx[j, keep - 1]))   # the state after the last accepted token
            r.done_gen += keep
            tokens += keep
    # ---- finished requests free their slots
    for r in [r for r in active if r.done_prompt >= r.prompt and r.done_gen >= r.gen]:
        checked += check(r)
        active.remove(r)
        free_groups.append(r.group)
        pool[r.group * G:(r.group + 1) * G] = float("nan")   # freed: any later read of it would show
        finished.append(r)
    steps += 1
    if steps % 10 == 0 or not (pending or active):
        dt = time.perf_counter() - t_start
        print(f"step {steps:4d}: {len(finished):3d}/{args.requests} requests done, {len(active)} active, "
              f"{tokens} tokens, {tokens / dt:,.0f} tokens/s", flush=True)
print(f"{len(finished)} requests on {args.device}, every output checked against a run alone ({checked} values)")
print("ok")
