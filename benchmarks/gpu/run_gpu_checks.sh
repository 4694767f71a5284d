#!/usr/bin/env bash
# GPU checks of the course's measurement harnesses, in one run (< 5 minutes, no network).
#
#   bash benchmarks/gpu/run_gpu_checks.sh RESULTS_DIR
#
# Needs 1+ NVIDIA GPU and a CUDA build of torch. Writes at most 8 JSON files to RESULTS_DIR:
# doctor.json, collectives_all_reduce.json, collectives_all_gather.json, gemm_bf16.json,
# membw.json, storage_io.json, ddp.json, summary.json (key numbers vs the catalog datasheet).
# ALLOW_CPU=1 runs the same steps on the CPU path (gloo, small sizes) to test the script itself.
# summary.json puts the harness's busbw next to the course model's expectation for this machine's
# topology (doctor's profile, labutil.cluster), GEMM next to the datasheet peak, copy next to HBM,
# and the collectives' per-rank memory next to its stated bound (3 x largest message + 128 MiB).
set -uo pipefail

out=${1:?usage: run_gpu_checks.sh RESULTS_DIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
PY=${PYTHON:-python}
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

ngpu=$("$PY" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)" 2>/dev/null || echo 0)
if [ "$ngpu" -lt 1 ] && [ "${ALLOW_CPU:-0}" != "1" ]; then
  echo "no CUDA GPU visible to torch (torch.cuda.is_available() is False); set ALLOW_CPU=1 to test on CPU" >&2
  exit 2
fi
if [ "$ngpu" -ge 1 ]; then
  backend=nccl; ranks=$ngpu; big=1G; gemm_sizes=2048,4096,8192; mem_sizes=256M,1G; io=1G; ckpt=256M
else
  backend=gloo; ranks=2; big=1M; gemm_sizes=128,256; mem_sizes=1M,16M; io=16M; ckpt=1M
  export MASTER_ADDR=127.0.0.1 GLOO_SOCKET_IFNAME=lo
fi
port() { "$PY" -c "from labutil.machine.launch import free_port; print(free_port())"; }
logs=$(mktemp -d)  # step logs stay out of RESULTS_DIR (at most 8 files there)
trap 'rm -rf "$logs"' EXIT
status=0
step() {  # step NAME TIMEOUT_S CMD...
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  if timeout --kill-after=10 "$limit" "$@" > "$logs/$name.log" 2>&1; then
    echo "ok    $name ($((SECONDS - t0)) s)"
  else
    echo "FAIL  $name ($((SECONDS - t0)) s), last lines:"; tail -n 15 "$logs/$name.log"; status=1
  fi
}
trun() {  # sets TR to a torchrun command line with a fresh free port
  TR=("$PY" -m torch.distributed.run --nnodes=1 --nproc-per-node="$ranks" --rdzv-backend=c10d
      --rdzv-endpoint="127.0.0.1:$(port)" --max-restarts=0); }

step doctor 60 sh -c "\"$PY\" -m labutil doctor --json > \"$out/doctor.json\""
trun; step collectives_all_reduce 120 "${TR[@]}" -m labutil.bench.collectives --op all_reduce -b 8 -e "$big" -f 4 -n 20 -w 5 \
     --backend "$backend" --timeout-s 60 --out "$out/collectives_all_reduce.json"
trun; step collectives_all_gather 90 "${TR[@]}" -m labutil.bench.collectives --op all_gather -b 1K -e "$big" -f 8 -n 20 -w 5 \
     --backend "$backend" --timeout-s 60 --out "$out/collectives_all_gather.json"
step gemm 60 "$PY" -m labutil.bench.gemm --dtype bf16 --sizes "$gemm_sizes" --out "$out/gemm_bf16.json"
step membw 30 "$PY" -m labutil.bench.membw --sizes "$mem_sizes" --out "$out/membw.json"
step storage_io 60 "$PY" -m labutil.bench.storage_io --size "$io" --ckpt-params "$ckpt" --no-progress --out "$out/storage_io.json"
# DDP with the harness's path default: GPU 134 M params bf16 (buckets and overlap visible), CPU 263 k fp32
trun; step ddp 120 "${TR[@]}" -m labutil.bench.ddp --backend "$backend" --steps 20 --out "$out/ddp.json"
step summary 30 "$PY" benchmarks/gpu/summarize.py "$out"
exit $status
