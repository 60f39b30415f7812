#!/usr/bin/env bash
# Why eager small all-reduces take ~3 us in some timed windows and 5-9 us in others: the same
# run with launch threads off, early launch off, and the process pinned to chosen CPUs (one,
# two, four). Run from the repository root on the GPU machine with the build in build/;
# logs under /tmp/s3diag, packed into $OUT (bench/results/2026-11-22-h200x2-s3-tuning/diag-eager).
o=/tmp/s3diag; mkdir -p $o; g=build/gpupeer; export NCCL_NVLS_ENABLE=0
{ nproc; lscpu | grep -iE "model name|socket|core|thread|numa"; for c in 0 1 2 3 8 16; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list)"; done; } > $o/cpus.txt 2>&1
sib=$(cat /sys/devices/system/cpu/cpu2/topology/thread_siblings_list | tr '-' ',')
run() { local name=$1; shift; { echo "\$ $*"; timeout 60 "$@" 2>&1; echo "[exit $?]"; } >> $o/$name.log; }
for i in 1 2; do run default $g coll all_reduce -b 8 -e 64K -f 4; done
run iters100 $g coll all_reduce -b 8 -e 64K -f 4 -n 100
run nothreads env GPUPEER_LAUNCH_THREADS=0 $g coll all_reduce -b 8 -e 64K -f 4
run noearly env GPUPEER_EARLY_LAUNCH=0 $g coll all_reduce -b 8 -e 64K -f 4
run pin-siblings taskset -c $sib $g coll all_reduce -b 8 -e 64K -f 4
run pin-two-cores taskset -c 2,5 $g coll all_reduce -b 8 -e 64K -f 4
run pin-four-cores taskset -c 2,4,6,8 $g coll all_reduce -b 8 -e 64K -f 4
run pin-one taskset -c 2 $g coll all_reduce -b 8 -e 64K -f 4
run allgather $g coll all_gather -b 8 -e 64K -f 4
tar czf $OUT/s3diag.tgz -C /tmp s3diag
cat $o/cpus.txt
