// The random soak: collectives of random shape run by the rank's communicator and by NCCL on the
// same inputs, compared element by element. Inputs are -1, 0 and 1, so that every sum, product,
// minimum and maximum over up to 8 ranks is exact in every type and both libraries must agree
// to the bit whatever their order of reduction; only an average over a rank count that is no
// power of two may round differently (NCCL multiplies by 1/n before summing floating types).

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cuda/device_memory.hpp"
#include "harness/collective_reference.hpp"
#include "harness/nccl_baseline.hpp"
#include "rank_scenarios.hpp"
#include "rank_worker_checks.hpp"

namespace gpupeer {
namespace {

constexpr DataType kTypes[] = {DataType::kFloat32,    DataType::kBFloat16,  DataType::kFloat16, DataType::kFloat64,
                               DataType::kInt32,      DataType::kInt64,     DataType::kInt8,    DataType::kUInt8,
                               DataType::kFloat8E4M3, DataType::kFloat8E5M2};
constexpr CollOp kOps[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast,
                           CollOp::kReduce,    CollOp::kAllToAll,  CollOp::kSendRecv};
constexpr RedOp kRedOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg};

// Elements of each type's pool: the largest input of a call plus room for its offset.
constexpr std::size_t kMostElements = 4u << 20;
constexpr std::size_t kMostOffset = 64;
constexpr std::size_t kPoolElements = kMostElements + kMostOffset;

// -1, 0 or 1 as `type` (uint8: 255, 0, 1), different for every rank and element.
std::vector<std::uint8_t> ternaryPool(DataType type, int rank) {
  std::vector<std::uint8_t> out(kPoolElements * dataTypeSize(type));
  std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(rank + 1);
  for (std::size_t i = 0; i < kPoolElements; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    storeElement(type, out.data(), i, static_cast<double>(static_cast<int>(x % 3) - 1));
  }
  return out;
}

// How far two results of an average may be apart: NCCL and gpupeer round differently.
double averageTolerance(DataType type) {
  switch (type) {
    case DataType::kFloat32: return 1e-6;
    case DataType::kFloat64: return 1e-12;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 1.0 / 64;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2: return 0.25;
    default: return 0;  // integers: the same division
  }
}

struct SoakCall {
  CollOp op;
  DataType type;
  RedOp redop;
  int root;
  std::size_t count, offset;  // elements per rank as Communicator counts them; offset into the pool
};

// The same sequence on every rank: one generator, seeded alike.
SoakCall nextCall(std::mt19937_64& rng, int n) {
  SoakCall c{};
  c.op = kOps[rng() % std::size(kOps)];
  c.type = kTypes[rng() % std::size(kTypes)];
  do c.redop = kRedOps[rng() % std::size(kRedOps)];
  while (!checkRedOpForType(c.redop, c.type).isOk());
  c.root = static_cast<int>(rng() % n);
  // Log-uniform sizes, mostly up to 1 Mi elements and one call in 16 up to 4 Mi, so that both
  // the small variants and many-piece calls come often; capped so input and output fit.
  const double top = std::log2(static_cast<double>(rng() % 16 == 0 ? kMostElements : kMostElements / 4));
  std::size_t total = static_cast<std::size_t>(std::exp2(std::uniform_real_distribution<double>(0, top)(rng)));
  const std::size_t per = std::max(collectiveInputElements(c.op, 1, n), collectiveOutputElements(c.op, 1, n));
  c.count = std::max<std::size_t>(1, std::min(total, kMostElements) / per);
  c.offset = rng() % kMostOffset;
  return c;
}

}  // namespace

void soakAgainstNccl(RankCommunicator& comm, cudaStream_t stream, int calls) {
  const int n = comm.ranks(), rank = comm.rank(), device = comm.device();
  // NCCL refuses two ranks on one GPU, but not on every rank: with 3 ranks on 2 GPUs the rank
  // alone on its GPU waited in NCCL's start-up until the test's bound. Every worker sees every
  // GPU (it takes rank % devices), so all decide alike.
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices < n) {
    std::printf("soak skipped: NCCL needs a GPU per rank: %d ranks, %d GPUs\n", n, devices);
    return;
  }
  // NCCL's id from rank 0, carried by the communicator under test (as coll --procs does).
  DeviceBuffer idBuffer;
  if (!ok(idBuffer.allocate(device, sizeof(NcclBaseline::Id)), "id buffer")) return;
  NcclBaseline::Id id{};
  Result<NcclBaseline::Id> made = rank == 0 ? NcclBaseline::uniqueId() : Result<NcclBaseline::Id>(id);
  // A rank without NCCL still takes part in the broadcast, with a zero id the others refuse.
  if (made.isOk()) id = made.value();
  cudaMemcpy(idBuffer.get(), id.data(), id.size(), cudaMemcpyHostToDevice);
  if (!ok(comm.broadcast(idBuffer.get(), idBuffer.get(), id.size(), DataType::kUInt8, 0, stream), "id broadcast") ||
      !synced(comm, stream, "id broadcast"))
    return;
  cudaMemcpy(id.data(), idBuffer.get(), id.size(), cudaMemcpyDeviceToHost);
  Result<std::unique_ptr<NcclBaseline>> opened =
      made.isOk() ? NcclBaseline::openRank(n, id, rank, device) : Result<std::unique_ptr<NcclBaseline>>(made.status());
  if (!opened.isOk()) {
    std::printf("soak skipped: NCCL cannot be opened: %s\n", opened.status().message().c_str());
    return;
  }
  NcclBaseline& nccl = *opened.value();
  std::vector<DeviceBuffer> pools(std::size(kTypes));
  for (std::size_t t = 0; t < std::size(kTypes); ++t) {
    const std::vector<std::uint8_t> host = ternaryPool(kTypes[t], rank);
    if (!ok(pools[t].allocate(device, host.size()), "pool")) return;
    cudaMemcpy(pools[t].get(), host.data(), host.size(), cudaMemcpyHostToDevice);
  }
  DeviceBuffer ours, theirs;
  if (!ok(ours.allocate(device, kMostElements * 8), "output") ||
      !ok(theirs.allocate(device, kMostElements * 8), "output"))
    return;
  cudaDeviceSynchronize();
  std::mt19937_64 rng(20261126);
  std::vector<std::uint8_t> a, b;
  int wrongCalls = 0, done = 0;
  std::size_t elements = 0;
  for (int i = 0; i < calls; ++i, ++done) {
    const SoakCall c = nextCall(rng, n);
    const std::size_t t = std::find(std::begin(kTypes), std::end(kTypes), c.type) - std::begin(kTypes);
    const std::size_t es = dataTypeSize(c.type), outBytes = collectiveOutputElements(c.op, c.count, n) * es;
    const void* send = pools[t].bytes() + c.offset * es;
    char what[160];
    std::snprintf(what, sizeof what, "call %d: %s %s %s root %d count %zu offset %zu, %d ranks", i, collOpName(c.op),
                  dataTypeName(c.type), redOpName(c.redop), c.root, c.count, c.offset, n);
    // Different fillings: an element that either library leaves unwritten differs.
    cudaMemsetAsync(ours.get(), 0x5a, outBytes, stream);
    cudaMemsetAsync(theirs.get(), 0xa5, outBytes, stream);
    if (!ok(runCollective(comm, c.op, send, ours.get(), c.count, c.type, c.redop, c.root, stream), what)) break;
    Status st = nccl.run(c.op, {send}, {theirs.get()}, c.count, c.type, c.redop, c.root, {stream});
    if (!st.isOk()) {
      // This NCCL does not take the call (an fp8 type on an older GPU, say): not a gpupeer fault.
      std::printf("nccl refused %s: %s\n", what, st.message().c_str());
      if (!synced(comm, stream, what)) break;
      continue;
    }
    if (!synced(comm, stream, what)) break;
    if (c.op == CollOp::kReduce && rank != c.root) continue;
    a.resize(outBytes);
    b.resize(outBytes);
    cudaMemcpy(a.data(), ours.get(), outBytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(b.data(), theirs.get(), outBytes, cudaMemcpyDeviceToHost);
    const double tolerance = c.redop == RedOp::kAvg && (c.op == CollOp::kAllReduce || c.op == CollOp::kReduce ||
                                                        c.op == CollOp::kReduceScatter)
                                 ? averageTolerance(c.type)
                                 : 0;
    std::size_t wrong = 0, first = 0;
    for (std::size_t e = 0; e < outBytes / es; ++e) {
      const double x = elementAsDouble(c.type, a.data(), e), y = elementAsDouble(c.type, b.data(), e);
      if (std::fabs(x - y) > tolerance * std::max(1.0, std::fabs(y)) && !(std::isnan(x) && std::isnan(y))) {
        if (wrong++ == 0) first = e;
      }
    }
    elements += outBytes / es;
    if (wrong) {
      ++wrongCalls;
      if (wrongCalls <= 20)
        std::printf("FAIL %s: %zu of %zu elements differ from NCCL's, first at %zu: %g against %g\n", what, wrong,
                    outBytes / es, first, elementAsDouble(c.type, a.data(), first),
                    elementAsDouble(c.type, b.data(), first));
      ++failures;
    }
  }
  WORKER_CHECK(done == calls, "the soak stopped after %d of %d calls", done, calls);
  std::printf("ok soak: %d calls against NCCL %s, %zu elements compared, %d calls differ\n", done,
              nccl.version().c_str(), elements, wrongCalls);
}

}  // namespace gpupeer
