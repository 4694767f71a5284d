"""This machine: what it has, what it should measure, and how the labs launch the harnesses on it.

- ``doctor``   ``python -m labutil doctor``: GPUs, driver, CUDA, torch/NCCL, topology, RDMA, findings
- ``expect``   the lab case of a machine (cpu / single / pcie / nvlink) and the busbw the course
               model (:class:`labutil.cluster.Cluster`) expects on it
- ``launch``   torchrun / srun / sbatch argument lists, a free port, the guarded subprocess runner,
               the Slurm templates (``python -m labutil.machine.launch --write-sbatch|--submit``)
- ``run``      the lab runner the lab notebooks call (``labs/labNN_*.py``)

Layering: ``machine`` sits above :mod:`labutil.bench` (it launches the harnesses and reads their
results); nothing in ``bench`` imports ``machine``.
"""

__all__: list[str] = []  # the modules are imported by name: labutil.machine.doctor, ...
