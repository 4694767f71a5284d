"""Real measurement harnesses used by the labs: torchrun / single-process programs, nothing else.

Every harness runs on a GPU machine (NCCL, CUDA events) and degrades to a clearly labelled CPU
path (gloo, host timers, small sizes) where there is no GPU, so the labs execute anywhere.
Results are written as JSON with :func:`labutil.fileio.write_json_atomic` (a killed run never
leaves a partial result file) and carry the environment they were measured in.

Modules:

- ``collectives`` nccl-tests-style sweep of all_reduce / all_gather / reduce_scatter /
  all_to_all / broadcast (``torchrun -m labutil.bench.collectives``)
- ``gemm``        matmul TFLOP/s by dtype and size
- ``membw``       device-memory (or host) copy bandwidth
- ``storage_io``  sequential write/read with fsync, checkpoint save/load
- ``ddp``         DDP scaling efficiency of a small model (lab06)
- ``cli``         one-line usage errors, exit status 2, flags checked before any work
- ``fit``         will the sizes fit? host memory (MemAvailable, cgroup limits), GPU memory, disk
- ``analysis``    pure numpy on the result records (α-β fit, scaling efficiency)
- ``common``      device detection, catalog names, the environment record (re-exported here)

What launches them and what this machine should measure live one layer up, in
:mod:`labutil.machine` (``launch``: torchrun / srun / sbatch argument lists and the guarded
runner; ``run``: the lab runner; ``expect``: the expected-result model; ``doctor``). Nothing in
``bench`` imports ``machine``.
"""

from .common import (CPU_BANNER, _cpu_only_from_version_source, catalog_gpu_name, cuda_available, environment,
                     median_call_s, parse_sizes, resolve_backend, torch_is_cpu_only_build)

__all__ = ["CPU_BANNER", "catalog_gpu_name", "torch_is_cpu_only_build", "cuda_available", "resolve_backend",
           "environment", "median_call_s", "parse_sizes"]
