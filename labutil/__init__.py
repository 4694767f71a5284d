"""labutil: the modeling core of the course 大规模GPU集群部署.

One module per concept; chapters and labs import from here and stay thin. Each model's docstring
states its formula and source; ``labutil/data/*.toml`` holds the catalog and reference data, each
entry with its source.

Foundations
- ``units``, ``validate``   unit conversions; argument checks with one error style
- ``hardware``             catalog of GPUs, NICs, switches, servers (``data/*.toml``)
- ``widgets``, ``plotting``, ``notebook``   the Explorer (controls + model + figure), figure style
- ``exercises``            self-grading exercises (``exercises/chNN.py``), solutions view
- ``nbtools``, ``serve``   build/check the notebooks; start JupyterLab
- ``coursemap``            modules, chapters, prerequisites

Models (chapter)
- ``workloads`` (2), ``architecture`` (3), ``models``, ``compute`` (4, 6), ``cost`` (5),
  ``memory`` (7), ``parallel`` (8), ``node``, ``links`` (9, 11), ``power`` (10), ``rdma`` (11),
  ``topology`` (12), ``comm`` (13, 14), ``storage``, ``dataloading`` (16-18), ``scheduling`` (21),
  ``inference`` (25), ``reliability`` (1, 27)

Measurement and operations
- ``parsers``              real tool output -> data (nccl-tests, nvidia-smi, ibstat, dcgmi, NCCL logs, ethtool -S,
                           mlxlink, ibdiagnet, lspci -vvv, fio / dd / lfs df in ``parsers.fio``, ...)
- ``fioparse``             old name of ``parsers.fio`` (re-exports it)
- ``health``               acceptance rules over parsed data -> findings with severity and reason
- ``doctor``               ``python -m labutil doctor``: what this machine has
- ``bench``                torchrun benchmark harnesses used by the labs (collectives, GEMM, memory, I/O, DDP)
- ``explore``              explorer and figure builders, one module per concept
"""

__version__ = "0.1.0"
