"""Makes the PyTorch memory snapshots that tests/fixtures/torch_snapshots/ holds (run on a GPU
machine with PyTorch; CI has neither). Each program grows and shrinks a caching allocator, with
the allocator's history recorded, then dumps the snapshot (`_dump_snapshot`'s pickle) and a JSON
rendering of the same dict for people to read:
  python3 tools/make_torch_snapshots.py OUT_DIR expandable|segments
`expandable` runs with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (segment_map /
segment_unmap events: cuMemMap / cuMemUnmap underneath); `segments` with the default allocator
(segment_alloc / segment_free: cudaMalloc / cudaFree)."""
import json
import os
import sys

out_dir, mode = sys.argv[1], sys.argv[2]
if mode == "expandable":
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
import torch  # noqa: E402  (after the allocator's configuration)

try:  # no stack frames: the fixture stays small and holds no paths of this machine
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                             max_entries=100000)
except TypeError:
    torch.cuda.memory._record_memory_history(True, max_entries=100000)

mb = 1 << 20
kept = []
for i in range(6):  # growth: 20, 40, ... 120 MiB
    kept.append(torch.empty((i + 1) * 20 * mb, dtype=torch.uint8, device="cuda"))
kept[0].fill_(1)
del kept[4]
del kept[2]
torch.cuda.synchronize()
torch.cuda.empty_cache()  # gives unused memory back: unmaps (expandable) or cudaFree (segments)
late = torch.empty(50 * mb, dtype=torch.uint8, device="cuda")
small = [torch.empty(512 * 1024, dtype=torch.uint8, device="cuda") for _ in range(8)]
torch.cuda.synchronize()
base = os.path.join(out_dir, mode)
torch.cuda.memory._dump_snapshot(base + ".pickle")
snapshot = torch.cuda.memory._snapshot()
with open(base + ".json", "w") as f:
    json.dump(snapshot, f, indent=1, default=str)
print(mode, "torch", torch.__version__, "pickle bytes", os.path.getsize(base + ".pickle"))
