"""labutil: the modelling core of the course 大规模GPU集群部署.

One module per course concept (``from labutil import comm`` is itself teaching material); chapters
and labs import from here and stay thin. Each model's docstring states its formula and its source;
``labutil/data/*.toml`` holds the catalog and reference data, every entry with its source, read
through ``data_files`` (one loader, strict keys).

Package map
===========
Every module, in seven layers. The rule: a module imports only modules of EARLIER layers and
modules listed ABOVE it in its own layer — never a later layer, never a module listed below it —
so there is no import cycle. ``tests/test_layers.py`` reads this table and checks every import
statement of every module against it (function-level and relative imports included); a new module
needs its line here, in a place its imports allow. ``name*`` stands for every module whose name
starts with ``name`` and has no line of its own. Explorers (ui) choose grids and presets and
draw; every number they draw comes from a model call. Exercises (course) never import ``explore``.

Layer 0 · base — no course content
    validate                  argument checks with one error style; unknown_name (closest names); scalar_or_array
    units                     unit constants and conversions (_gb = 1e9 B, _gbps = Gbit/s, _gbs = GB/s)
    fileio                    atomic file writes (a killed run never leaves a partial result file)
    tables                    MarkdownTable and show_table: rows of dicts as a Markdown table
    data_files                the one loader of labutil/data: load(name), a strict schema per file; Table
    parsers._common           ParseError and the text helpers of every tool parser (base: imports nothing;
                              concept modules that parse their own tool's output import it)

Layer 1 · catalog — the data files as objects
    hardware                  GPUs, NICs, switches, reference servers (gpus/nics/switches/servers.toml)
    links                     link generations: PCIe (gen1-gen6) and InfiniBand (SDR-XDR) lane rates and encodings
    models                    transformer presets (Llama, GPT-3, Mixtral, DeepSeek ...) and their parameter counts

Layer 2 · model — numpy models, one per course concept (chapters in brackets)
    compute                   training FLOPs, time to train, GPUs for a deadline, MFU, roofline (4, 6)
    memory                    training memory per GPU: model states, ZeRO, activations (7)
    comm                      the bare α-β collective model: algorithms, algbw/busbw (13); never imports cluster
    scenarios                 named clusters and networks in one place: seed 003, the reference designs (1, 8, 14)
    nccl_tuning               NCCL's own tuner: which algorithm and protocol it picks, at what modelled cost (15)
    cluster                   Cluster: a GPU cluster and the one collective / busbw model on it (13-15, 22-23)
    dp                        data parallelism on a Cluster: gradient-sync time, weak scaling, required bandwidth (14)
    busbw_validation          the cluster model against public nccl-tests results, calibration vs held out (13, 22)
    parallel                  parallel layouts (DP/TP/PP/SP/CP/EP, ZeRO, FSDP shard groups): validity, bubble, volume (8)
    steptime                  step time of a layout (GEMM/non-GEMM compute, TP/PP/DP/ZeRO/FSDP/EP traffic) and the layout search (8, 24)
    topology                  fat trees, leaf-spine / three-tier fabric sizing, torus, dragonfly (12)
    architecture              the four layers and the network planes of a cluster, sized for a catalog server (3)
    node                      server node design: per-GPU ratios, GPU-NIC PCIe path, GPUDirect RDMA, NUMA affinity (9)
    rdma                      RDMA fabrics: InfiniBand rates, PFC headroom, ECN / DCQCN (11)
    power                     server, rack and facility power, PUE, cooling, energy cost (10)
    cost                      capex, opex, TCO, cost per GPU-hour, cloud vs owned, downtime (5)
    storage                   checkpoint size and write time, read/write interference, tiers, drives (16, 17)
    dataloading               the data-loading pipeline: storage read, CPU decode, host-to-device, GPU (18)
    reliability               failure rates, MTBF, checkpoint intervals, goodput, XID triage (1, 27)
    inference                 LLM serving: KV cache, decode/prefill roofline, P99 under load, CV sizing (25)
    sharing                   GPU sharing between tenants: MIG profiles and placement, time-slicing, MPS (29)
    scheduling                seeded simulation of a shared GPU cluster: policies, backfill, fair share (21)
    workloads                 the representative workloads and what each demands of a cluster (2)
    published_runs            published training runs beside the step-time model: the validation table; goodput from reliability (4, 8, 24)

Layer 3 · ops — real machines and their tools' output
    parsers.dcgm              dcgmi diag result tables
    parsers.infiniband        ibstat, ibv_devinfo, perfquery
    parsers.nccl_log          NCCL debug logs (NCCL_DEBUG=INFO) and kernel XID lines
    parsers.nccl_tests        nccl-tests stdout (all_reduce_perf & co.) and the course harness's output
    parsers.nvidia_smi        nvidia-smi: default table, --query-gpu CSV, -q, topo -m
    parsers.perftest          ib_write_bw / ib_read_bw / ib_send_bw
    parsers.prometheus        the Prometheus text exposition format: parser and writer
    parsers.sysstat           iostat -x and nvidia-smi dmon
    parsers.megatron          Megatron-LM iteration log lines
    parsers.ethtool           ethtool -S NIC counters (RoCE pause/PFC, discards) and the PFC-storm rule (11)
    parsers.fio               fio (JSON, text, terse), dd and lfs df output (16-18)
    parsers.ibdiagnet         ibdiagnet summary and findings (12)
    parsers.lspci             lspci -vvv PCIe link capability and status (9, 19)
    parsers.mlxlink           mlxlink -c -e: link state, speed, BER and FEC counters (12)
    parsers.show_gids         show_gids: the RoCE GID table and the RoCE v2 index for a port (11)
    parsers.samples           the sample tool outputs shipped with the course (samples_*.toml)
    parsers                   the parsers' public face: every parse_* above and ParseError
    fioparse                  the old import path of parsers.fio (re-exports it)
    health                    acceptance rules over parsed tool output -> findings with severity and reason (23)
    inventory                 per-node versions, BIOS settings and PCIe links, and the rules that check them (19)
    containers                container run-spec linter, the GPU Operator as data, image-pull arithmetic (20)
    monitoring                alert rules, stragglers, dcgm-exporter counter lists, synthetic telemetry (26)
    promrules                 the alert rules as a Prometheus rules file and its promtool unit tests (26)
    manifests                 the Kubernetes objects ch20/21/26/29 show, built by functions
    machine.launch            torchrun / srun / sbatch argument lists, a free port, a guarded runner
    frameworks                framework configs from a plan: torchrun, DDP buckets, DeepSpeed, Megatron-LM, FSDP (24)
    bench.common              what the torchrun harnesses share: device detection, catalog names, environment
    bench.cli                 command-line plumbing of the harnesses: one-line errors, exit status 2
    bench.fit                 will this size fit? host RAM (cgroup-aware), device and disk memory before any work
    bench.analysis            analysis of measured results: α-β fit, scaling rows, roofline points
    bench.collectives         nccl-tests-style collective benchmark over torch.distributed (lab02, lab03, ch22)
    bench.ddp                 DDP scaling efficiency (lab06)
    bench.gemm                GEMM throughput by dtype and size on the catalog roofline (lab04)
    bench.membw               device-memory copy bandwidth (lab04)
    bench.storage_io          sequential and checkpoint-like storage I/O (lab05)
    bench                     the harness package (torchrun programs only)
    machine.expect            what this machine should measure: GPU topology, expected busbw (course model)
    machine.doctor            python -m labutil doctor: what this machine offers the labs, with findings
    machine.run               the lab runner the lab notebooks call, so their cells stay thin
    machine                   this machine: doctor, expect, launch, run
    doctor                    the old import path of machine.doctor (re-exports it)
    troubleshoot.engine       the layered triage engine: network -> storage -> GPU -> software (28)
    troubleshoot.signatures   the failure-signature catalogue (failure_signatures.toml): notes -> layer, cause, check
    troubleshoot.lexicon      the layer lexicon (troubleshoot_lexicon.toml): notes -> a low-confidence layer
    troubleshoot.recognise.signals    the evidence type every recogniser emits (Signal)
    troubleshoot.recognise.prose      free-text notes (English and Chinese) matched against the signatures
    troubleshoot.recognise.blocks     block recognisers: a tool's output inside a pasted fragment, judged
    troubleshoot.recognise.lines      line recognisers: single log lines of a fixed form
    troubleshoot.recognise.fragments  split a pasted text into fragments and run the recognisers over them
    troubleshoot.recognise    the recognisers' public face
    troubleshoot.triage       triage(): pasted evidence -> layer, deciding lines, next check; the CLI
    troubleshoot              the troubleshooting package's public face

Layer 4 · course — content computed from the layers below
    coursemap                 modules, chapters and prerequisites (course.toml)
    capstone                  ch30's end-to-end cluster design, chaining the models
    facts                     numbers several chapters quote, each computed once (checked against the prose)
    exercises.answer_units    the units an exercise can be answered in
    exercises.answers         reading a learner's answer: a number with its unit, or a choice
    exercises.feedback        what a learner sees after a check
    exercises.registry        the Exercise class, register and exercise(key)
    exercises                 the exercises' public face (Exercise, register, exercise)
    exercises.ch*             chapter NN's exercises (registered on import; answers from the models)
    exercises.labs            the labs' questions on the learner's own measurements
    exercises.__main__        python -m labutil.exercises --solutions

Layer 5 · ui — what the learner sees
    raster                    fast Agg rasterisation with a text-bitmap cache
    plotting                  figure style and helpers (new_figure, save_png, figure_png)
    widgets                   the Explorer: controls bound to a pure model function, redrawing a figure
    notebook                  setup() for the first cell of every notebook; re-exports show_table
    explore                   the explorer package (one module per concept below)
    explore.overview          ch01: effective compute, failures at scale, the course map figure
    explore.workloads         ch02: requirement radars of the representative workloads
    explore.architecture      ch03: the network planes explorer and the architecture figures
    explore.compute           ch04, ch06: time to train, roofline, GPU catalog
    explore.cost              ch05: TCO, break-even, budget comparison, downtime
    explore.memory            ch07: training memory, ZeRO stages
    explore.parallel          ch08: parallel layouts, bubble, communication volume
    explore.node              ch09: the GPU-NIC path, server ratios
    explore.power             ch10: facility power, PUE, rack density
    explore.rdma              ch11: PFC headroom, IB rates, ECN / DCQCN
    explore.topology          ch12: fabric sizing and drawn topologies
    explore.comm              ch13, ch14: collective time, busbw vs size, DP bandwidth
    explore.health            ch23: acceptance against the cluster model, counter deltas
    explore.nccl              ch15, ch22: NCCL tuning and acceptance
    explore.storage           ch16-ch18: I/O size, checkpoints, data pipeline, tiers
    explore.inventory         ch19: inventory checks and rack elevations
    explore.containers        ch20: image pulls, run-spec lint, GPU Operator order
    explore.scheduling        ch21: policies, backfill, fair share
    explore.frameworks        ch24: framework plans, DDP buckets, ZeRO vs FSDP
    explore.inference         ch25: serving memory, decode roofline, P99 under load
    explore.monitoring        ch26: alert rules, utilisation gap, stragglers
    explore.reliability       ch27: goodput vs interval, Llama 3 failures, timelines
    explore.troubleshoot      ch28: layered triage, incidents
    explore.sharing           ch29: GPU sharing modes, MIG layouts
    explore.capstone          ch30: the end-to-end design explorer
    explore.bench             labs 02-06: figures of measured results

Layer 6 · tools — build, grade and serve the course
    nbtools                   build and check the notebooks from their py:percent sources; editions
    serve                     python -m labutil.serve: start JupyterLab (make lab)
    grading.export            the chapters' exercises as an nbgrader course; the learner build of labutil
    grading                   graded classes (nbgrader)
    grading.__main__          python -m labutil.grading
    syllabus                  docs/SYLLABUS.md generated from course.toml and the notebooks' learning objectives
    __main__                  python -m labutil doctor | triage

This package's ``__init__`` imports nothing, so any module may import ``labutil`` itself.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
