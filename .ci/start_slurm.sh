#!/usr/bin/env bash
# Start a real one-node Slurm (slurmctld + slurmd + munge) on this machine, for the workflow
# tests marked `slurm` (tests/workflows/test_slurm.py). Needs root and Debian/Ubuntu apt.
# Idempotent: returns at once if `sinfo` already shows an idle node. Exits non-zero (and the
# Slurm tests skip with a reason) if Slurm cannot be installed or started.
#
#   sudo bash .ci/start_slurm.sh        # then: python -m pytest tests/workflows -m slurm
set -euo pipefail

log() { echo "start_slurm: $*" >&2; }
node_idle() { sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed)'; }

if command -v sinfo >/dev/null 2>&1 && node_idle; then
  log "Slurm already running with an idle node"; exit 0
fi
if [ "$(id -u)" != 0 ]; then log "must run as root"; exit 1; fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  log "installing slurmctld slurmd slurm-client munge (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
fi

HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
CONF_DIR=/etc/slurm
mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /var/lib/munge /var/log/munge
cat > "$CONF_DIR/slurm.conf" <<CONF
# one-node Slurm for stratoflow's workflow tests (written by .ci/start_slurm.sh)
ClusterName=stratoflow
SlurmctldHost=${HOST}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=pmi2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=${HOST} NodeAddr=127.0.0.1 CPUs=${CPUS} RealMemory=${MEM} State=UNKNOWN
PartitionName=debug Nodes=${HOST} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
cat > "$CONF_DIR/cgroup.conf" <<CONF
CgroupAutomount=no
CONF

if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
if ! pgrep -x munged >/dev/null; then
  log "starting munged"
  if id munge >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged || /usr/sbin/munged --force
  else
    /usr/sbin/munged --force
  fi
fi
if ! pgrep -x slurmctld >/dev/null; then log "starting slurmctld"; slurmctld; fi
if ! pgrep -x slurmd >/dev/null; then log "starting slurmd"; slurmd; fi

for _ in $(seq 1 60); do
  if node_idle; then
    log "node ${HOST} idle: $(sinfo -h -o '%P %a %D %T %C' | head -1)"
    exit 0
  fi
  # a node that came up DOWN (e.g. after a restart) is returned to service
  scontrol update NodeName="${HOST}" State=RESUME >/dev/null 2>&1 || true
  sleep 1
done
log "Slurm did not report an idle node within 60 s"
sinfo >&2 || true
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
