"""A PyTorch program with the bug of vllm#43020 (a sleep that frees memory while kernels still
use it), for `vmm-run record` (docs/recording.md): it maps 64 MiB with the driver's VMM calls
(through ctypes, as vLLM's CuMemAllocator does through its extension), wraps it as a tensor, queues
kernels that keep reading and writing it, then unmaps and releases it without synchronising. The
next synchronisation reports CUDA_ERROR_ILLEGAL_ADDRESS; the program exits 1. Run on the GPU:
  vmm-run record -o unmap_before_sync.trace -- python3 tools/recorded/torch_unmap_before_sync.py"""
import ctypes
import sys

import torch

cuda = ctypes.CDLL("libcuda.so.1")
torch.cuda.init()
torch.zeros(1, device="cuda")  # the primary context, current on this thread


def check(result, what):
    if result != 0:
        sys.exit(f"{what} failed: CUresult {result}")


class Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class AllocProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", AllocFlags)]


class AccessDesc(ctypes.Structure):
    _fields_ = [("location", Location), ("flags", ctypes.c_int)]


size = 64 << 20
prop = AllocProp(type=1, location=Location(type=1, id=0))  # pinned, device 0
ptr, handle = ctypes.c_uint64(), ctypes.c_uint64()
check(cuda.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                               ctypes.c_uint64(0), ctypes.c_uint64(0)), "cuMemAddressReserve")
check(cuda.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop),
                       ctypes.c_uint64(0)), "cuMemCreate")
check(cuda.cuMemMap(ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), handle, ctypes.c_uint64(0)),
      "cuMemMap")
access = AccessDesc(location=Location(type=1, id=0), flags=3)
check(cuda.cuMemSetAccess(ptr, ctypes.c_size_t(size), ctypes.byref(access), ctypes.c_size_t(1)),
      "cuMemSetAccess")


class Interface:  # the memory as a tensor, without copying
    __cuda_array_interface__ = {"shape": (size // 4,), "typestr": "<f4",
                                "data": (ptr.value, False), "version": 3}


kv = torch.as_tensor(Interface(), device="cuda")
kv.fill_(1.0)
torch.cuda.synchronize()
for _ in range(2000):  # ~100 ms of kernels reading and writing the page
    kv.mul_(1.0001)
# The bug: the memory goes back while those kernels still run.
check(cuda.cuMemUnmap(ptr, ctypes.c_size_t(size)), "cuMemUnmap")
check(cuda.cuMemRelease(handle), "cuMemRelease")
try:
    torch.cuda.synchronize()
except RuntimeError as e:
    print(f"torch_unmap_before_sync: the fault surfaced: {e}".splitlines()[0])
    sys.exit(1)
print("torch_unmap_before_sync: no fault (the kernels ended before the unmap)")
