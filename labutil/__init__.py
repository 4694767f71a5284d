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
  ``memory`` (7), ``parallel`` (layouts, 8), ``steptime`` (step time and layout search, 8), ``node``,
  ``links`` (9, 11), ``power`` (10), ``rdma`` (11), ``topology`` (12), ``comm`` (13: the α-β
  algorithms, below ``cluster``), ``cluster`` (13-15, 22-23: the one collective / busbw model of a
  real cluster), ``dp`` (14: data parallelism on a cluster, above ``cluster``), ``nccl_tuning`` (15:
  NCCL's tuner constants, 2.7.5 and 2.30.7), ``scenarios`` (named clusters and networks: seed 003,
  the reference designs), ``busbw_validation`` (22: the cluster model against public nccl-tests
  results), ``storage``, ``dataloading`` (16-18), ``scheduling`` (21),
  ``inference`` (25), ``reliability`` (1, 27)

Measurement and operations
- ``parsers``              real tool output -> data (nccl-tests, nvidia-smi, ibstat, dcgmi, NCCL logs,
                           Megatron-LM iteration logs in ``parsers.megatron``, ...)
- ``fioparse``             fio / dd / lfs output
- ``health``               acceptance rules over parsed data -> findings with severity and reason
- ``containers`` (20), ``monitoring`` (26), ``sharing`` (29)   run-spec linter and GPU Operator order; alert rules,
  promtool unit tests, dcgm-exporter counter lists; MIG placement and GPU sharing
- ``promrules``            the alert rules as a Prometheus rules file and their ``promtool test rules`` unit tests
- ``manifests``            the Kubernetes objects ch20/21/26/29 show, validated by real schemas in the tests
- ``bench``                torchrun benchmark harnesses used by the labs (collectives, GEMM, memory, I/O, DDP)
- ``machine``              this machine: ``doctor`` (``python -m labutil doctor``), ``expect`` (what it
                           should measure), ``launch`` (torchrun/srun/sbatch), ``run`` (the lab runner);
                           above ``bench``. ``labutil.doctor`` re-exports ``machine.doctor``
- ``explore``              explorer and figure builders, one module per concept
"""

__version__ = "0.1.0"
