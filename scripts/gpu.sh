#!/usr/bin/env bash
# The GPU runs, from a build made elsewhere and carried to the GPU machine (docs/gpu-machine.md).
# Builds nothing. Usage:
#   scripts/gpu.sh tests|bench|coll|tune|procs|sanitize [--gpus N] [--out DIR] [--build DIR] [--max SIZE]
#                  [--ops all_reduce,reduce_scatter,...] [--procs P]
#     tests  the GPU tests, nvidia-smi's topology beside gpupeer snapshot/topo/check, the doctor
#            (plain, without P2P, GPUs reordered), explain, and the bad-input cases
#     bench  every bench testcase on every pair, sweeps for the farthest pair, the copy API's paths
#            and the staged pipeline; the host-cost micro-benchmarks where they were built
#     coll   every collective by the table against NCCL in the same process, eager and in CUDA
#            graphs, 8 B to --max, every result checked (the reducing ones also in bf16, in
#            graphs); the small all-reduce by factors of 2;
#            without P2P against CUDA's own staging and NCCL
#     tune   every algorithm of every operation forced over 64 KiB to --max in graphs, timing
#            only, two passes in turn, beside the table's choice: the data behind the table
#            (with --procs P: P processes, the algorithms that go through the scratch)
#     procs  one process per rank (RankCommunicator): its GPU tests, then every collective by
#            coll --procs P (default one per GPU, 2 on one GPU, which the ranks then share)
#            against NCCL in the same shape, eager and in CUDA graphs, 8 B to --max (the
#            reducing ones also in bf16, in graphs)
#     sanitize the GPU tests under compute-sanitizer memcheck, racecheck and synccheck (the
#            tests of one GPU; with 2+ GPUs the communicator's too; SANITIZE_FILTER overrides)
# --gpus: GPUs 0..N-1 (default every visible GPU). --out: default
# bench/results/<machine>/<date>-<topic>/, machine as h200x2 (model, count). --max: default 256M
# for procs, else 512M on 2 GPUs and 128M on more. --ops: the collectives coll and tune run
# (default all seven; tune of all seven takes ~7 minutes on 2 GPUs, more on 4: split it over
# calls). Each step's log starts with its exact command; summary.txt lists exit codes and times;
# meta.json, machine.txt and results.jsonl (scripts/results_from_log.py) sit beside them.
# GPUPEER_COMMIT names the build's commit where the checkout has no .git.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/logged_steps.sh"
suite=${1:-}; shift || true
gpus="" out="" build=build max="" procs=""
ops="all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv"
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) gpus=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --ops) ops=${2//,/ }; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    *) echo "gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case $suite in tests|bench|coll|tune|procs|sanitize) ;; *) sed -n '2,/^set -u/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;; esac
g="$build/gpupeer"
# Binaries gzipped to fit a carry (docs/gpu-machine.md) are unpacked in place.
for f in "$build"/*.gz "$build"/tests/*.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
[ -x "$g" ] || { echo "gpu.sh: no $g: build with scripts/setup.sh and carry the build folder" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "gpu.sh: no nvidia-smi: not a GPU machine" >&2; exit 3; }
export NCCL_NVLS_ENABLE=0  # NVLink multicast stays off on shared machines

visible=$(nvidia-smi --query-gpu=index --format=csv,noheader | grep -c .)
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && visible=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
n=${gpus:-$visible}
last=$((n - 1))
# The machine-level steps (check, doctor, bench) see GPUs 0..N-1 only.
[ -n "$gpus" ] && [ -z "${CUDA_VISIBLE_DEVICES:-}" ] && export CUDA_VISIBLE_DEVICES=$(seq -s, 0 "$last")
# One process per rank: 256 MiB whatever the count (the sizes frameworks all-reduce).
if [ -z "$max" ]; then
  if [ "$suite" = procs ]; then max=256M; elif [ "$n" -le 2 ]; then max=512M; else max=128M; fi
fi
# The model's name: "NVIDIA H100 80GB HBM3" -> h100, "NVIDIA H200" -> h200.
model=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 |
  awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[A-Za-z]+[0-9][0-9]/) { print tolower($i); exit } print tolower($NF)}')
topic=$suite; [ "$suite" = coll ] && topic=collectives; [ "$suite" = tune ] && topic=algorithms
[ "$suite" = procs ] && topic=multi-process
[ "$suite" = sanitize ] && topic=compute-sanitizer
machine=${model}x$n
out=${out:-$here/../bench/results/$machine/$(date -u +%Y-%m-%d)-$topic}
mkdir -p "$out"; : > "$out/summary.txt"
write_machine_info
link_build_path "$build"

run_tests() {
  STEP_TIMEOUT=${STEP_TIMEOUT:-600} step ctest-gpu bash -c "cd '$build' && ctest -L gpu --output-on-failure"
  step nvsmi-topo nvidia-smi topo -m
  step nvsmi-p2p-read nvidia-smi topo -p2p r
  step nvsmi-nvlink nvidia-smi nvlink -s
  step snapshot "$g" snapshot -o "$out/snapshot.json"
  step topo "$g" topo
  step topo-json "$g" topo --json
  step check "$g" check --devices "$(seq -s, 0 "$last")"
  step check-json "$g" check --json --devices "$(seq -s, "$last" -1 0)"
  step doctor "$g" doctor
  step doctor-json "$g" doctor --json
  step doctor-p2p-disabled env NCCL_P2P_DISABLE=1 "$g" doctor
  step doctor-visible-reversed env CUDA_VISIBLE_DEVICES="$(seq -s, "$last" -1 0)" "$g" doctor
  step explain-seed "$g" explain "RuntimeError: CUDA error: peer access is not supported between these two devices"
  step report "$g" report -o "$out/report.html"
  step check-bad-dup "$g" check --devices 0,0
  step check-bad-index "$g" check --devices 0,99
  step bench-bad-zero "$g" bench -s 0
  step bench-bad-testcase "$g" bench -t bogus,latency_pingpong
}

run_bench() {
  step bench-p2p "$g" bench -t ce_read,ce_write,ce_bidir,sm_read,sm_write,sm_bidir,sm_copy,ce_one_to_all,ce_all_to_one -i 5
  step bench-host-latency "$g" bench -t h2d,d2h,latency_chase,latency_ce,latency_pingpong -i 5
  step bench-transfer "$g" bench -t staged,staged_bidir,ce_no_p2p,batch_4k -i 5
  local path
  for path in ce kernel staged; do step "copy-path-$path" "$g" bench -t copy --path $path -i 5; done
  step sweep-ce-write "$g" bench --sweep -t ce_write -b 8 -e 1G -f 2 --pair 0,$last
  step sweep-sm "$g" bench --sweep -t sm_copy,sm_write,sm_read -b 8 -e 1G -f 2 --pair 0,$last
  step sweep-no-p2p "$g" bench --sweep -t ce_no_p2p -b 4K -e 1G -f 4 --pair 0,$last
  [ -e "$build/libgpupeer_c.so" ] && step python-binding-cost env GPUPEER_LIBRARY="$build/libgpupeer_c.so" \
    PYTHONPATH="$here/../python" python3 "$here/../bench/micro/python_binding_cost.py" --gpu
  [ -x "$build/gpupeer_launch_cost" ] && step launch-cost "$build/gpupeer_launch_cost"
  [ -x "$build/gpupeer_ce_sm_mix" ] && for mib in 32 64; do step "ce-sm-mix-${mib}M" "$build/gpupeer_ce_sm_mix" $mib; done
  return 0
}

# Whether collective $1 reduces. The reducing ones also run in bf16, the type frameworks reduce
# in: its 16-byte units hold twice float's elements, and the reduction's depth once held a
# bf16 all-reduce of 256 MiB on 4 processes 10% behind float's.
reduces() { case $1 in all_reduce|reduce_scatter|reduce) return 0 ;; esac; return 1; }

run_coll() {
  local op mode
  for op in $ops; do
    for mode in graph eager; do
      step "g$n-$op-$mode" "$g" coll $op -b 8 -e "$max" -f 4 -g "$n" --datatype float --op sum \
        $([ $mode = graph ] && echo -G 10) --baseline nccl -o "$out/g$n-$op-$mode.json"
    done
    reduces "$op" && step "g$n-$op-bf16-graph" "$g" coll $op -b 8 -e "$max" -f 4 -g "$n" --datatype bfloat16 \
      --op sum -G 10 --baseline nccl -o "$out/g$n-$op-bf16-graph.json"
  done
  step "g$n-all_reduce-small-graph" "$g" coll all_reduce -b 8 -e 8M -f 2 -g "$n" --datatype float --op sum -G 10 \
    --baseline nccl -o "$out/g$n-all_reduce-small-graph.json"
  for op in all_reduce all_gather broadcast; do
    record no-p2p NCCL_P2P_DISABLE=1 "$g" coll $op -b 1M -e 256M -f 4 -g 2 --baseline nccl
    record no-p2p NCCL_P2P_DISABLE=1 GPUPEER_STAGING=cuda "$g" coll $op -b 1M -e 256M -f 4 -g 2
  done
}

# With --procs, one process per rank and the algorithms that reach the peers through the scratch.
run_tune() {
  local op algo pass algos shape=(-g "$n")
  [ -n "$procs" ] && shape=(--procs "$procs")
  for pass in 1 2; do
    for op in $ops; do
      if [ -n "$procs" ]; then
        case $op in
          all_reduce) algos="table oneshot twoshot ce" ;;
          reduce_scatter) algos="table oneshot ce" ;;
          reduce) algos="table oneshot chain relay ce" ;;
          broadcast) algos="table oneshot chain relay" ;;
          *) algos="table oneshot" ;;
        esac
      else
        case $op in
          all_reduce) algos="table oneshot twoshot pull split ce" ;;
          reduce_scatter) algos="table oneshot pull split ce" ;;
          reduce) algos="table oneshot pull split chain relay ce" ;;
          all_gather) algos="table oneshot split ce" ;;
          broadcast) algos="table oneshot split chain relay ce" ;;
          *) algos="table oneshot ce" ;;
        esac
        [ "$n" -gt 2 ] && [ "$op" != alltoall ] && algos="$algos ring"
      fi
      for algo in $algos; do
        local force=()
        [ $algo = table ] || force=(GPUPEER_ALGO=$algo)
        record "$op-$algo-$pass" "${force[@]}" "$g" coll $op -b 64K -e "$max" -f 4 "${shape[@]}" -G 10 -c 0
      done
    done
  done
}

run_procs() {
  local op mode p=${procs:-$([ "$n" -gt 1 ] && echo "$n" || echo 2)}
  STEP_TIMEOUT=${STEP_TIMEOUT:-600} step ctest-rank bash -c "cd '$build' && ctest -L gpu -R Rank --output-on-failure"
  for op in $ops; do
    for mode in eager graph; do
      step "p$p-$op-$mode" "$g" coll $op --procs "$p" -b 8 -e "$max" -f 4 --datatype float --op sum \
        $([ $mode = graph ] && echo -G 10) --baseline nccl -o "$out/p$p-$op-$mode.json"
    done
    reduces "$op" && step "p$p-$op-bf16-graph" "$g" coll $op --procs "$p" -b 8 -e "$max" -f 4 --datatype bfloat16 \
      --op sum -G 10 --baseline nccl -o "$out/p$p-$op-bf16-graph.json"
  done
}

run_sanitize() {
  local tool filter="OneShotLinesGpu.*:RankCommunicatorOneRank.*:SmCopyGpu.BulkKernelWithinOneGpu"
  filter="$filter:TransferGpu.SameDeviceHostAndZeroBytes"
  # The communicator's, the check's and the copies' tests with 2+ GPUs, but for the one that
  # provokes cudaErrorPeerAccessAlreadyEnabled on purpose: memcheck counts that API error.
  [ "$n" -gt 1 ] && filter="$filter:CommunicatorGpu.*:PeerCheckGpu.*:TransferGpu.*-PeerCheckGpu.EnablingTwiceIsNotAnError"
  for tool in memcheck racecheck synccheck; do
    STEP_TIMEOUT=${STEP_TIMEOUT:-300} step "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 \
      "$build/tests/gpupeer_gpu_tests" --gtest_filter="${SANITIZE_FILTER:-$filter}"
  done
}

echo "gpu.sh $suite: $n GPU(s), logs in $out"
"run_$suite"
commit=${GPUPEER_COMMIT:-$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)}
command="scripts/gpu.sh $suite --gpus $n --max $max --ops ${ops// /,}${procs:+ --procs $procs}"
case $suite in
  tests) about="The GPU tests, nvidia-smi's topology beside gpupeer snapshot, topo and check, the doctor three ways, explain and the bad-input cases." ;;
  bench) about="Every bench testcase on every pair, size sweeps for GPUs 0 and $last, the copy API's paths and the host-cost micro-benchmarks." ;;
  coll) about="Every collective by the algorithm table against NCCL in one process on $n GPUs, 8 B-$max, eager and in CUDA graphs, results checked." ;;
  tune) about="Every algorithm each operation can take, forced in CUDA graphs on $n GPUs${procs:+ in $procs processes} beside the table's choice, 64 KiB-$max, timing only, two passes." ;;
  procs) about="One process per rank: the multi-process GPU tests and every collective by coll --procs against NCCL, 8 B-$max, eager and in graphs." ;;
  sanitize) about="The GPU tests on $n GPUs under compute-sanitizer memcheck, racecheck and synccheck." ;;
esac
write_meta "$commit" "$machine" "$command" "$about"
if command -v python3 >/dev/null; then python3 "$here/results_from_log.py" "$out"
else echo "gpu.sh: no python3 here: run scripts/results_from_log.py $out where there is one"; fi
cat "$out/summary.txt"
