#!/usr/bin/env bash
# Runs one rank of an mpirun (Open MPI, MPICH), Slurm or torchrun job as if it were on one of HOSTS hosts, the
# ranks in blocks: NCCL_HOSTID and GPUPEER_HOST_ID name the host, so NCCL and libgpupeer_nccl.so
# both take a communicator of one machine for one spanning hosts.
# Usage: mpirun -np 4 ranks_as_hosts.sh 2 all_reduce_perf -b 8 -e 256M
#        torchrun --nproc-per-node 4 --no-python ranks_as_hosts.sh 2 python3 program.py
set -eu
hosts=${1:?usage: ranks_as_hosts.sh HOSTS COMMAND...}
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-${RANK:-}}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:-${WORLD_SIZE:-}}}}
if [ -z "$rank" ] || [ -z "$size" ]; then
  echo "ranks_as_hosts.sh: no rank and size from the launcher (OMPI_COMM_WORLD_*, PMI_*, SLURM_*, RANK/WORLD_SIZE)" >&2
  exit 2
fi
if ! [ "$hosts" -ge 1 ] 2>/dev/null || [ "$hosts" -gt "$size" ]; then
  echo "ranks_as_hosts.sh: HOSTS must be from 1 to the rank count ($size), not '$hosts'" >&2
  exit 2
fi
export NCCL_HOSTID="ranks-as-hosts-$((rank * hosts / size))"
export GPUPEER_HOST_ID=$NCCL_HOSTID
exec "$@"
