#!/usr/bin/env bash
# Start a real Slurm (Debian's slurm-wlm 22.05: slurmctld + TWO slurmd, munge auth) for
# `make slurm-test` / tests/test_slurm.py. Everything lives in $SLURM_TEST_DIR (default
# /tmp/labutil-slurm); nothing under /etc/slurm is changed: clients find the config through
# SLURM_CONF, which this script prints as its last line (`export SLURM_CONF=...`).
#
#   bash tests/slurm/setup_slurm.sh [--install] [--stop]
#
# --install  apt-get install slurm-wlm munge when slurmctld is missing (root + apt only; retries
#            while another apt-get holds the dpkg lock)
# --stop     stop the daemons this script started and exit
#
# Two nodes on one host, so a job with --nodes=2 runs the templates' multi-node path for real (one
# srun task per node, one torchrun per node, c10d rendezvous on the first node): Slurm's
# "multiple slurmd" mode (slurm.conf man page: NodeName ... Port=, %n in SlurmdSpoolDir /
# SlurmdPidFile / SlurmdLogFile; `slurmd -N <node>`), which Debian's 22.05 build supports. The
# nodes are NAMED 127.0.0.1 and 127.0.0.2 — loopback addresses (Linux routes all of 127/8 to lo)
# — so `scontrol show hostnames` in the templates yields an address this host resolves, as a
# real cluster's node names do. Where the second node cannot start, the script falls back to one
# node and writes the reason to $SLURM_TEST_DIR/two_nodes_unavailable (the 2-node tests skip with it).
#
# Container-friendly settings (no systemd, no cgroup hierarchy to delegate):
#   ProctrackType=proctrack/linuxproc  track job processes by parent PID, not cgroups
#   TaskPlugin=task/none                no cgroup/affinity binding of tasks
#   SlurmdParameters=config_overrides   each node is declared as a GPU-class node (64 CPUs,
#                                       gpu:8 GRES without device files) so the committed
#                                       templates (#SBATCH --gpus-per-node=8 --cpus-per-task=32
#                                       --exclusive) are accepted unchanged on a 2-core machine;
#                                       the jobs then run the CPU path (BACKEND=gloo) set by the test.
# Exit status: 0 running, 77 cannot run here (the reason is printed on stderr), 1 failed to start.
set -uo pipefail

dir=${SLURM_TEST_DIR:-/tmp/labutil-slurm}
ctld_port=${SLURM_TEST_CTLD_PORT:-6817}
slurmd_port=${SLURM_TEST_SLURMD_PORT:-6818}
slurmd_port2=${SLURM_TEST_SLURMD_PORT2:-$((slurmd_port + 10))}
conf=$dir/slurm.conf
nodes="127.0.0.1 127.0.0.2"
skip() { echo "slurm-test skipped: $*" >&2; exit 77; }

stop() {  # slurmd.pid: the single-node layout of earlier versions of this script
  local f pid
  for f in "$dir"/slurmd-*.pid "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    # only a daemon of this folder: a stale pid file (a daemon that died) may name another process
    if grep -qa -- "$conf" "/proc/$pid/cmdline" 2>/dev/null; then kill "$pid" 2>/dev/null; fi
    rm -f "$f"
  done
  sleep 1
}
if [ "${1:-}" = "--stop" ]; then stop; exit 0; fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  if [ "${1:-}" != "--install" ]; then skip "slurmctld/munged are not installed (run with --install as root, or apt-get install slurm-wlm munge)"; fi
  [ "$(id -u)" = 0 ] || skip "installing Slurm needs root"
  command -v apt-get >/dev/null || skip "no apt-get on this machine"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null 2>&1 || skip "apt-get update failed (no package registry reachable?)"
  ok=0
  for i in $(seq 1 40); do  # another apt-get may hold the dpkg lock: wait for it
    if apt-get install -y -q slurm-wlm munge >"$dir.apt.log" 2>&1; then ok=1; break; fi
    grep -q "Could not get lock" "$dir.apt.log" || break
    sleep 15
  done
  [ $ok = 1 ] || skip "apt-get install slurm-wlm munge failed: $(tail -n 1 "$dir.apt.log")"
fi
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start jobs as their user"

mkdir -p "$dir/ctld" "$dir/spool"
# munge: a key and a running daemon (as the munge user; munged refuses a key others can read)
if ! pgrep -x munged >/dev/null; then
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null || \
      dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  fi
  chown munge:munge /etc/munge/munge.key 2>/dev/null; chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null
  if id munge >/dev/null 2>&1; then runuser -u munge -- /usr/sbin/munged || skip "munged did not start"
  else /usr/sbin/munged --force || skip "munged did not start"; fi
fi
munge -n | unmunge >/dev/null 2>&1 || skip "munge does not round-trip a credential (munge -n | unmunge)"

write_conf() {  # write_conf "NODE [NODE]": slurm.conf + gres.conf for these nodes
  local list=$1 n port=$slurmd_port first=1
  cat > "$conf" <<CONF
# written by tests/slurm/setup_slurm.sh — a test cluster of $(echo $list | wc -w) node(s) on one host
ClusterName=labutil
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
CONF
  : > "$dir/gres.conf"
  for n in $list; do
    [ $first = 1 ] || port=$slurmd_port2
    first=0
    echo "NodeName=$n NodeAddr=$n Port=$port CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=8000 Gres=gpu:8 State=UNKNOWN" >> "$conf"
    echo "NodeName=$n Name=gpu File=$dir/fakegpu/nvidia[0-7]" >> "$dir/gres.conf"
  done
  echo "PartitionName=debug Nodes=$(echo $list | tr ' ' ',') Default=YES MaxTime=60 State=UP" >> "$conf"
}
# gpu GRES needs device files (slurmd drops "file-less" GPUs and rejects regular files): eight
# symlinks to /dev/null stand in for /dev/nvidia0..7; no job opens them (the test runs gloo).
mkdir -p "$dir/fakegpu"
for i in 0 1 2 3 4 5 6 7; do ln -sfn /dev/null "$dir/fakegpu/nvidia$i"; done
cat > "$dir/cgroup.conf" <<CONF
# not used: proctrack/linuxproc and task/none need no cgroup plugin
CgroupAutomount=no
CONF
export SLURM_CONF=$conf

export SLURM_CONF=$conf

start() {  # start "NODE [NODE]": slurmctld + one slurmd per node; 0 when every node is idle
  local list=$1 n state states
  stop
  rm -rf "$dir/ctld" && mkdir -p "$dir/ctld"  # the node list may differ from the saved state's
  write_conf "$list"
  /usr/sbin/slurmctld -f "$conf" -i || { tail -n 20 "$dir/slurmctld.log" >&2; echo "slurmctld failed" >&2; return 1; }
  for n in $list; do
    /usr/sbin/slurmd -f "$conf" -N "$n" || { tail -n 20 "$dir/slurmd-$n.log" >&2; echo "slurmd -N $n failed" >&2; return 1; }
  done
  for i in $(seq 1 30); do
    states=""
    for n in $list; do
      state=$(sinfo -h -N -n "$n" -o %t 2>/dev/null | head -n 1)
      case "$state" in drain*|inval*|down*) scontrol update nodename="$n" state=resume >/dev/null 2>&1 ;; esac
      case "$state" in idle*|mix*|alloc*) ;; *) states="$states $n:${state:-none}" ;; esac
    done
    if [ -z "$states" ]; then echo "slurm up: nodes $list idle" >&2; return 0; fi
    sleep 1
  done
  echo "not idle after 30 s:$states; slurmd logs:" >&2
  for n in $list; do tail -n 5 "$dir/slurmd-$n.log" >&2; done
  return 1
}

rm -f "$dir/two_nodes_unavailable"
if start "$nodes"; then echo "export SLURM_CONF=$conf"; exit 0; fi
why="two slurmd on one host did not start (multiple-slurmd mode): $(tail -n 1 "$dir/slurmd-127.0.0.2.log" 2>/dev/null)"
if start "127.0.0.1"; then
  echo "$why" > "$dir/two_nodes_unavailable"
  echo "$why; running ONE node, the 2-node tests will skip" >&2
  echo "export SLURM_CONF=$conf"; exit 0
fi
exit 1
