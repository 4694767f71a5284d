#!/usr/bin/env bash
# Start a real single-node Slurm (Debian's slurm-wlm 22.05: slurmctld + slurmd, munge auth) for
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
# Container-friendly settings (no systemd, no cgroup hierarchy to delegate):
#   ProctrackType=proctrack/linuxproc  track job processes by parent PID, not cgroups
#   TaskPlugin=task/none                no cgroup/affinity binding of tasks
#   SlurmdParameters=config_overrides   the node is declared as a GPU-class node (64 CPUs,
#                                       gpu:8 GRES without device files) so the committed
#                                       templates (#SBATCH --gpus-per-node=8 --cpus-per-task=32)
#                                       are accepted unchanged on a 2-core machine; the jobs then
#                                       run the CPU path (BACKEND=gloo) set by the test.
# Exit status: 0 running, 77 cannot run here (the reason is printed on stderr), 1 failed to start.
set -uo pipefail

dir=${SLURM_TEST_DIR:-/tmp/labutil-slurm}
ctld_port=${SLURM_TEST_CTLD_PORT:-6817}
slurmd_port=${SLURM_TEST_SLURMD_PORT:-6818}
conf=$dir/slurm.conf
skip() { echo "slurm-test skipped: $*" >&2; exit 77; }

stop() {
  for f in "$dir/slurmd.pid" "$dir/slurmctld.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
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

cat > "$conf" <<CONF
# written by tests/slurm/setup_slurm.sh — a single-node test cluster
ClusterName=labutil
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$dir/ctld
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
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
NodeName=localhost NodeAddr=127.0.0.1 CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=8000 Gres=gpu:8 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=60 State=UP
CONF
# gpu GRES needs device files (slurmd drops "file-less" GPUs and rejects regular files): eight
# symlinks to /dev/null stand in for /dev/nvidia0..7; no job opens them (the test runs gloo).
mkdir -p "$dir/fakegpu"
for i in 0 1 2 3 4 5 6 7; do ln -sfn /dev/null "$dir/fakegpu/nvidia$i"; done
cat > "$dir/gres.conf" <<CONF
NodeName=localhost Name=gpu File=$dir/fakegpu/nvidia[0-7]
CONF
cat > "$dir/cgroup.conf" <<CONF
# not used: proctrack/linuxproc and task/none need no cgroup plugin
CgroupAutomount=no
CONF
export SLURM_CONF=$conf

stop  # a previous run's daemons (same state folder)
/usr/sbin/slurmctld -f "$conf" -i || { tail -n 20 "$dir/slurmctld.log" >&2; echo "slurmctld failed" >&2; exit 1; }
/usr/sbin/slurmd -f "$conf" -N localhost || { tail -n 20 "$dir/slurmd.log" >&2; echo "slurmd failed" >&2; exit 1; }
for i in $(seq 1 30); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1)
  case "$state" in drain*|inval*|down*) scontrol update nodename=localhost state=resume >/dev/null 2>&1 ;; esac
  case "$state" in idle*|mix*|alloc*) echo "slurm up: node localhost $state" >&2; echo "export SLURM_CONF=$conf"; exit 0 ;; esac
  sleep 1
done
echo "the node did not become idle (state: ${state:-none}); slurmd log:" >&2
tail -n 20 "$dir/slurmd.log" >&2
exit 1
