"""A PyTorch program with expandable segments for `vmm-run record` (docs/recording.md): its
caching allocator grows (cuMemCreate + cuMemMap + cuMemSetAccess per 20 MiB page), kernels write
and read the memory, empty_cache() gives pages back (cuMemUnmap + cuMemRelease), memory grows
again, and a CUDA graph is captured and replayed over it. Run on the GPU machine:
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \\
      vmm-run record -o torch_expandable.trace -- python3 tools/recorded/torch_expandable.py
`--launches N` adds N small kernels on VMM memory (for the recorder's overhead per launch)."""
import os
import sys
import time

if "expandable_segments" not in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch  # noqa: E402  (after the allocator's configuration)

launches = int(sys.argv[sys.argv.index("--launches") + 1]) if "--launches" in sys.argv else 0
mb = 1 << 20
start = time.perf_counter()
kept = []
for i in range(6):  # growth: 20, 40, ... 120 MiB of float32
    t = torch.empty((i + 1) * 5 * mb, dtype=torch.float32, device="cuda")
    t.fill_(float(i))
    kept.append(t)
total = sum(float(t.sum()) for t in kept)  # reads every tensor (synchronises)
del kept[4]
del kept[2]
torch.cuda.synchronize()
torch.cuda.empty_cache()  # unmaps and releases the pages no tensor uses
late = torch.ones(12 * mb, dtype=torch.float32, device="cuda")
small = [torch.full((128 * 1024,), 2.0, device="cuda") for _ in range(8)]

# A graph captured over expandable-segment memory, replayed three times.
x = torch.ones(4 * mb, device="cuda")
y = torch.empty_like(x)
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    y.copy_(x * 2)  # warm-up outside the capture
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y.copy_(x * 2)
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
assert float(y[0]) == 2.0

for _ in range(launches):  # the overhead probe: small kernels on VMM memory
    x.add_(1.0)
torch.cuda.synchronize()
elapsed = time.perf_counter() - start
print(f"torch_expandable: total {total:.0f}, {launches} extra launches, {elapsed * 1e3:.1f} ms")
