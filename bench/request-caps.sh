#!/usr/bin/env bash
# The request caps, measured: for each oversized request, the controller's peak RSS
# (VmHWM) and the longest `sinfo -h` answer while it ran (sinfo every 10 ms).
# Usage: bench/request-caps.sh BIN_DIR LABEL PORT [CASE ...]
#   BIN_DIR holds spurctld, spurd, spur; CASES (default all): scancel sbatch sinfo streams history lua.
#   streams needs FLOOD=path to the stream_flood example
#   (`cargo build --release -p spur-tests --example stream_flood`).
#   SETTLE=SECS waits after each request for what it leaves to later (a job's start).
set -u
B=$1; label=$2; port=$3; shift 3
cases=${*:-scancel sbatch sinfo streams history lua}
d=$(mktemp -d); cd "$d"
url=http://127.0.0.1:$port
conf() {
  cat > spur.conf <<CONF
cluster_name = "m"
${1:-}
[accounting]
database_url = "sqlite://$d/spur.db"
[[nodes]]
name = "node[01-03]"
cpus = 4
memory_mb = 4096
[[partitions]]
name = "batch"
nodes = "node[01-03]"
default = true
CONF
}
conf
mkdir links; "$B/spur" install-links links >/dev/null
export SPUR_CONTROLLER_ADDR=$url SPUR_AUTH=none
ctl=; agent=
start() {
  "$B/spurctld" --config spur.conf --listen 127.0.0.1:$port >ctl.out 2>ctl.err &
  ctl=$!
  for _ in $(seq 1 300); do grep -q listening ctl.out 2>/dev/null && break; sleep 0.1; done
  "$B/spurd" --controller $url --nodes 'node[01-03]' --state-dir "$d/spool-$RANDOM" >/dev/null 2>&1 &
  agent=$!
  for _ in $(seq 1 100); do links/sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
}
stop() { kill $ctl $agent 2>/dev/null; wait $ctl $agent 2>/dev/null; }
# Runs "$@" against the running controller while sinfo probes it; prints the row.
probe() {
  local what=$1; shift
  local flag=$d/stop; rm -f "$flag"
  ( worst=0; n=0
    while [ ! -f "$flag" ] && [ $n -lt 6000 ]; do
      s=$(date +%s%N); timeout 60 links/sinfo -h >/dev/null 2>&1; e=$(( ($(date +%s%N) - s) / 1000000 ))
      [ $e -gt $worst ] && worst=$e; n=$((n+1)); sleep 0.01
    done; echo $worst > "$d/worst" ) &
  local prober=$!
  local s=$(date +%s%N)
  timeout 120 "$@" > out.txt 2>&1; local rc=$?
  local took=$(( ($(date +%s%N) - s) / 1000000 ))
  sleep "${SETTLE:-0}"
  touch "$flag"; wait $prober
  local hwm=$(awk '/VmHWM/ {print $2}' /proc/$ctl/status 2>/dev/null)
  printf '%-8s %-30s rc=%-3s took=%6s ms  peak_rss=%8s KiB  longest_sinfo=%5s ms  %s\n' "$label" "$what" "$rc" \
    "$took" "$hwm" "$(cat $d/worst)" "$(tail -c 120 out.txt | tr '\n' ' ')"
}
measure() { start; probe "$@"; stop; rm -f spur.db*; }
name=$(head -c 120000 /dev/zero | tr '\0' x)
pat=$(printf '%%x%.0s' $(seq 1 20000))
for c in $cases; do case $c in
scancel) measure "scancel overlapping array" links/scancel '1_[0-4000000:2,1-4000000:2,1-4000000:2]' ;;
sbatch) measure "sbatch 120K name, 20000 %x" links/sbatch -J "$name" -o "$pat" --wrap true ;;
sinfo) measure "sinfo -n 100K literal" links/sinfo -n "$(head -c 100000 /dev/zero | tr '\0' a)[1-1000]" ;;
streams) measure "2000 unread Watch streams" "$FLOOD" $url 2000 40 2000 ;;
history)
  # 200 ended jobs with 1 MiB scripts, past MinJobAge, then a restart and sacct over them.
  conf "[scheduler]
min_job_age_secs = 1"
  start
  { echo '#!/bin/sh'; head -c 1048576 /dev/zero | tr '\0' '#' | fold -w 1000 | sed 's/^/# /'; echo true; } > big.sh
  for i in $(seq 1 200); do links/sbatch -o /dev/null big.sh >/dev/null; done
  for _ in $(seq 1 600); do [ -z "$(links/squeue -h -o %i)" ] && break; sleep 0.2; done
  sleep 2; stop; start
  probe "restart + sacct, 200 x 1 MiB" links/sacct -a -n -X -S 2000-01-01 -o JobID,State
  stop; rm -f spur.db*; conf ;;
lua)
  # A plugin whose create_context takes 2 GiB in 64 MiB strings (C calls, which
  # the deadline checked between Lua instructions cannot stop), then spins.
  # The controller refuses to start either way: its peak is GNU time's.
  cat > hog.lua <<'LUA'
function hres_create_context(ctx, layers)
  local t = {}
  for i = 1, 32 do t[i] = string.rep("x", 64 * 1048576) end
  while true do end
end
function hres_destroy_context(ctx) return slurm.SUCCESS end
function hres_maintenance(ctx, layers) return slurm.SUCCESS end
function hres_controller_job_prerun(ctx, job, prep) return slurm.SUCCESS end
function hres_controller_job_revoke(ctx, job, prep) return slurm.SUCCESS end
function hres_controller_job_epilog(ctx, job, prep) return slurm.SUCCESS end
function hres_node_job_prolog(prep, job) return slurm.SUCCESS end
function hres_node_job_epilog(prep, job) return slurm.SUCCESS end
function hres_node_task_prolog(prep, job, a, b, env) return slurm.SUCCESS end
function hres_node_user_task_prolog(prep, job, a, b, env) return slurm.SUCCESS end
function hres_node_task_epilog(prep, job, a, b, env) return slurm.SUCCESS end
LUA
  cat > resources.yaml <<YAML
- resource: qpu
  mode: MODE_1
  plugin:
    type: hres/lua
    config:
      - name: path
        value: hog.lua
    maintenance_cycle: 60
    maintenance_timeout: 10
  layers:
    - layer_name: qpu1
      nodes: ["node[01-02]"]
      count: 1
YAML
  s=$(date +%s%N)
  /usr/bin/time -v "$B/spurctld" --config spur.conf --listen 127.0.0.1:$port >ctl.out 2>ctl.err
  printf '%-8s %-30s took=%6s ms  peak_rss=%8s KiB  %s\n' "$label" "plugin taking 2 GiB at load" \
    "$(( ($(date +%s%N) - s) / 1000000 ))" "$(awk '/Maximum resident/ {print $6}' ctl.err)" "$(grep spurctld: ctl.err)"
  rm -f resources.yaml spur.db* ;;
*) echo "unknown case $c (scancel sbatch sinfo streams history lua)" >&2; exit 2 ;;
esac; done
rm -rf "$d"
