#!/bin/bash
# Side by side with a real Slurm from Debian's packages (slurm-wlm 22.05 on
# bookworm): the same one-shot commands against spurctld and slurmctld on this
# machine, alternating runs, each the mean of N calls (printed in µs).
#
#   sudo bash bench/slurm-compare.sh [N] [JOBS]
#
# Installs slurm-wlm and munge with apt-get when missing, runs a single-host
# Slurm (slurmctld and one slurmd on this host; nodes that never register
# would have slurmctld resolve and ping them) under /tmp/spur-slurm, and Spur's release binaries
# with the client as installed (build first: cargo build --release --bins &&
# cargo build --profile dist -p spur-client --bin spur) with the example config. With the
# partition down on both, JOBS jobs are submitted to each first, so squeue
# and sprio list that many pending jobs.
set -euo pipefail
N=${1:-100}
JOBS=${2:-10000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/target/release
CLI=$ROOT/target/dist/spur
W=/tmp/spur-slurm
H=$(hostname -s)
CPUS=$(nproc)

command -v slurmctld >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null
[ -x "$BIN/spurctld" ] && [ -x "$CLI" ] || {
  echo "build first: cargo build --release --bins && cargo build --profile dist -p spur-client --bin spur" >&2
  exit 2
}

rm -rf "$W" && mkdir -p "$W"/{state,spool,log,spur,links,sd} && chown -R slurm:slurm "$W/state" "$W/log"
# --- Slurm -------------------------------------------------------------------
cat > "$W/slurm.conf" <<CONF
ClusterName=cmp
SlurmctldHost=$H
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SlurmUser=root
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldLogFile=$W/log/slurmctld.log
SlurmdLogFile=$W/log/slurmd.log
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SchedulerType=sched/backfill
SelectType=select/cons_tres
PriorityType=priority/multifactor
MaxJobCount=$((JOBS * 2 + 1000))
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$H CPUs=$CPUS State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=DOWN
CONF
export SLURM_CONF=$W/slurm.conf
pgrep -x munged >/dev/null || { mkdir -p /run/munge && chown munge:munge /run/munge && sudo -u munge /usr/sbin/munged 2>/dev/null || /usr/sbin/munged --force; }
slurmctld -i
slurmd
# --- Spur --------------------------------------------------------------------
sed 's/6817/6837/; s/6818/6838/; s#sqlite://spur-example.db#sqlite://'"$W"'/spur/spur.db#; s/^default = true$/default = true\nstate = "DOWN"/' \
  "$ROOT/examples/spur.conf" > "$W/spur/spur.conf"
(cd "$W/spur" && exec "$BIN/spurctld" --config spur.conf > "$W/log/spurctld.log" 2>&1) &
SPURCTLD=$!
"$CLI" install-links "$W/links" >/dev/null
SPUR_ADDR=http://127.0.0.1:6837
"$BIN/spurd" --controller $SPUR_ADDR --nodes 'node[01-08]' --state-dir "$W/sd" > "$W/log/spurd.log" 2>&1 &
SPURD=$!
cleanup() { kill $SPURD $SPURCTLD 2>/dev/null || true; scontrol shutdown >/dev/null 2>&1 || true; }
trap cleanup EXIT

# @NODE@ is a node each side has up: Spur's node08, Slurm's own host.
spur() { local a=("${@:2}"); SPUR_CONTROLLER_ADDR=$SPUR_ADDR "$W/links/$1" "${a[@]//@NODE@/node08}"; }
slurm() { local a=("${@:2}"); "/usr/bin/$1" "${a[@]//@NODE@/$H}"; }
for i in $(seq 100); do
  spur sinfo -h 2>/dev/null | grep -q idle && slurm sinfo -h -n "$H" 2>/dev/null | grep -q idle && break
  sleep 0.2
done

# The default partition is down on both (in the configs), so JOBS jobs pend
# with their priority computed, which sprio lists (a held job's is 0 in
# Slurm), and never start.
for side in spur slurm; do
  # Every timed command must work on both sides before it is timed.
  for cmd in "scontrol update nodename=@NODE@ state=drain reason=cmp" "scontrol update nodename=@NODE@ state=resume" \
             "sinfo" "squeue" "sprio"; do
    # shellcheck disable=SC2086
    $side $cmd >/dev/null || { echo "$side: '$cmd' failed" >&2; exit 1; }
  done
done
echo "submitting $JOBS jobs to each ..." >&2
for i in $(seq "$JOBS"); do spur sbatch -o /dev/null --wrap true >/dev/null; done
for i in $(seq "$JOBS"); do slurm sbatch -o /dev/null --wrap true >/dev/null; done

# mean µs of N calls of "$@"
per_call() {
  local s e
  s=$(date +%s%N)
  for _ in $(seq "$N"); do "$@" >/dev/null 2>&1; done
  e=$(date +%s%N)
  echo $(( (e - s) / N / 1000 ))
}
row() {
  local label=$1; shift
  local a b c d
  a=$(per_call spur "$@"); b=$(per_call slurm "$@")
  c=$(per_call spur "$@"); d=$(per_call slurm "$@")
  local sp=$(( (a + c) / 2 )) sl=$(( (b + d) / 2 ))
  printf "| %-44s | %8d | %8d | %5s× |\n" "$label" "$sp" "$sl" "$(echo "scale=2; $sl / $sp" | bc)"
}
echo "| command (mean of 2 x $N calls, alternated) | Spur µs | Slurm µs | Spur speed-up |"
echo "| --- | --- | --- | --- |"
row "scontrol update state=drain" scontrol update nodename=@NODE@ state=drain reason=cmp
row "scontrol update state=resume" scontrol update nodename=@NODE@ state=resume
row "sinfo" sinfo
row "sbatch (serial)" sbatch -o /dev/null --wrap true
row "squeue ($JOBS+ pending)" squeue
row "sprio ($JOBS+ pending)" sprio
