#!/usr/bin/env bash
# Integration test of the Slurm path on one machine: installs Debian's slurm-wlm and munge, starts
# munged, slurmctld and slurmd as a one-node cluster on localhost, runs a tiny manifest as an array
# of N shards plus the merge (submit.sh), runs the same manifest locally into one database, and
# checks that the merged database holds exactly the local run's set of keys.
#
# Winners: the key set (op, op hash, shape, dtype, target:threads, Halide and tuner versions) must
# be identical. The winning schedule of a key may legitimately differ between two runs: with the
# same seed both runs measure the same candidates, but which of two close candidates is faster
# depends on timing noise. So the schedules are compared and reported (same / different, and the
# ratio of the two winners' times measured in their own runs), not asserted.
#
# Needs root (it installs packages and starts daemons). Usage:
#   scripts/slurm/local-cluster-test.sh [BUILD_DIR] [N]
# Leaves the cluster running; `scripts/slurm/local-cluster-test.sh --stop` stops it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
conf_dir=/etc/slurm
state=/var/lib/opgen-slurm

stop() {
    for d in slurmd slurmctld; do
        [ -f "$state/$d.pid" ] && kill "$(cat "$state/$d.pid")" 2>/dev/null || true
    done
    [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
    echo "slurm: stopped"
}
if [ "${1:-}" = "--stop" ]; then stop; exit 0; fi

build="${1:-$root/build}"
n="${2:-2}"
opgen="$build/bin/opgen"
[ -x "$opgen" ] || { echo "error: no opgen command at '$opgen' (build first)" >&2; exit 2; }

"$root/scripts/setup.sh" slurm-wlm munge

# munge: the key is created by the package; the daemon runs as the munge user.
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
[ -f /etc/munge/munge.key ] || { mungekey --create 2>/dev/null || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
if ! munge -n >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null

host="$(hostname -s)"
# The node as slurmd sees it (CPUs, sockets, cores, memory), so the two agree.
node_line="$(slurmd -C | head -1)"
mkdir -p "$conf_dir" "$state/spool" "$state/ctld"
# Containers have no systemd and often no writable cgroups: track processes by parent id.
cat > "$conf_dir/slurm.conf" <<CONF
ClusterName=opgen-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
$node_line State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
rm -f "$conf_dir/cgroup.conf"  # no cgroup plugin is used (Slurm 22.05 has no CgroupPlugin=disabled)

if ! scontrol ping 2>/dev/null | grep -q UP; then
    slurmctld
    for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
fi
pgrep -F "$state/slurmd.pid" >/dev/null 2>&1 || slurmd
for _ in $(seq 100); do
    sinfo -h -o %T 2>/dev/null | grep -Eq '^(idle|mixed|allocated)' && break
    sleep 0.2
done
scontrol update NodeName="$host" State=RESUME 2>/dev/null || true
sinfo

work="$(mktemp -d /tmp/opgen-slurm.XXXXXX)"
manifest="$root/manifests/slurm-tiny.json"
flags=(--threads 1)
echo "== Slurm: $n shards of $manifest into $work/slurm"
read -r array merge < <(OPGEN="$opgen" SBATCH_EXTRA="--cpus-per-task=1" "$root/scripts/slurm/submit.sh" "$manifest" "$work/slurm" "$n" "${flags[@]}")
echo "array job $array, merge job $merge"
export OPGEN="$opgen"
t0=$(date +%s)
while squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do
    sleep 1
    if (( $(date +%s) - t0 > 1800 )); then echo "error: jobs still queued after 30 minutes" >&2; exit 1; fi
done
cat "$work/slurm"/opgen-*.out
[ -f "$work/slurm/merged.db" ] || { echo "error: the merge job left no merged.db (see the logs above)" >&2; exit 1; }

echo "== local: the same manifest into $work/local.db"
"$opgen" batch "$manifest" --db "$work/local.db" --quiet "${flags[@]}"

python3 "$root/scripts/slurm/compare-winners.py" "$work/local.db" "$work/slurm/merged.db"
