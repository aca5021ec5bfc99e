#!/usr/bin/env bash
# The request caps, measured: for each oversized request, the controller's peak RSS
# (VmHWM) and the longest `sinfo -h` answer while it ran (sinfo every 10 ms).
# Usage: bench/request-caps.sh BIN_DIR LABEL PORT  (BIN_DIR holds spurctld, spurd, spur;
# SETTLE=SECS waits after each request for what it leaves to later, ONLY=1 runs the sbatch case).
set -u
B=$1; label=$2; port=$3
d=$(mktemp -d); cd "$d"
cat > spur.conf <<CONF
cluster_name = "m"
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
mkdir links; "$B/spur" install-links links >/dev/null
export SPUR_CONTROLLER_ADDR=http://127.0.0.1:$port SPUR_AUTH=none
measure() {
  local what=$1; shift
  "$B/spurctld" --config spur.conf --listen 127.0.0.1:$port >ctl.out 2>ctl.err &
  local pid=$!
  for _ in $(seq 1 100); do grep -q listening ctl.out 2>/dev/null && break; sleep 0.1; done
  "$B/spurd" --controller http://127.0.0.1:$port --nodes 'node[01-03]' --state-dir "$d/spool-$RANDOM" >/dev/null 2>&1 &
  local agent=$!
  for _ in $(seq 1 100); do links/sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 0.1; done
  local stop=$d/stop; rm -f "$stop"
  ( worst=0; n=0
    while [ ! -f "$stop" ] && [ $n -lt 6000 ]; do
      s=$(date +%s%N); timeout 60 links/sinfo -h >/dev/null 2>&1; e=$(( ($(date +%s%N) - s) / 1000000 ))
      [ $e -gt $worst ] && worst=$e; n=$((n+1)); sleep 0.01
    done; echo $worst > "$d/worst" ) &
  local prober=$!
  local s=$(date +%s%N)
  timeout 60 "$@" >/dev/null 2>&1; local rc=$?
  local took=$(( ($(date +%s%N) - s) / 1000000 ))
  # What the request leaves for later (a job's start) has this long to show.
  sleep "${SETTLE:-0}"
  touch "$stop"; wait $prober
  local hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status 2>/dev/null)
  kill $pid $agent 2>/dev/null; wait $pid $agent 2>/dev/null
  printf '%-8s %-28s rc=%-3s took=%6s ms  peak_rss=%8s KiB  longest_sinfo=%5s ms\n' "$label" "$what" "$rc" "$took" "$hwm" "$(cat $d/worst)"
  rm -f spur.db*
}
name=$(head -c 120000 /dev/zero | tr '\0' x)
pat=$(printf '%%x%.0s' $(seq 1 20000))
[ -n "${ONLY:-}" ] || measure "scancel overlapping array" links/scancel '1_[0-4000000:2,1-4000000:2,1-4000000:2]'
measure "sbatch 120K name, 20000 %x" links/sbatch -J "$name" -o "$pat" --wrap true
[ -n "${ONLY:-}" ] || measure "sinfo -n 100K literal" links/sinfo -n "$(head -c 100000 /dev/zero | tr '\0' a)[1-1000]"
rm -rf "$d"
