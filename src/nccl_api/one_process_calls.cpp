#include "nccl_api/one_process_calls.hpp"

#include <map>
#include <utility>

namespace gpupeer::nccl_api {
namespace {

bool sameCollective(const GroupedCall& a, const GroupedCall& b) {
  return a.op == b.op && a.count == b.count && a.type == b.type && a.redop == b.redop && a.root == b.root;
}

// Every rank's collective present and all alike.
bool wholeCollective(const std::vector<GroupedCall>& calls, const PairedCalls& p) {
  if (p.sendRecv || p.byRank.empty()) return false;
  for (int index : p.byRank)
    if (index < 0 || !sameCollective(calls[index], calls[p.byRank[0]])) return false;
  return true;
}

// Exactly one send to the next rank and one receive from the previous per rank, all of one count
// and type, each rank's two on one stream (gpupeer's call takes one stream per rank).
bool wholeShift(const std::vector<GroupedCall>& calls, const PairedCalls& p, int n) {
  if (p.members.size() != 2u * n) return false;
  const GroupedCall& first = calls[p.members.front()];
  for (int r = 0; r < n; ++r) {
    if (p.byRank[r] < 0 || p.receiveByRank[r] < 0) return false;
    const GroupedCall& s = calls[p.byRank[r]];
    const GroupedCall& v = calls[p.receiveByRank[r]];
    if (s.root != (r + 1) % n || v.root != (r + n - 1) % n || s.stream != v.stream) return false;
    for (const GroupedCall* c : {&s, &v})
      if (c->count != first.count || c->type != first.type) return false;
  }
  return true;
}

}  // namespace

std::vector<PairedCalls> pairGroupedCalls(const std::vector<GroupedCall>& calls) {
  std::vector<PairedCalls> collectives;
  // (set, rank) -> how many collectives that rank has made so far; (set, k) -> its pairing.
  std::map<std::pair<const void*, int>, int> made;
  std::map<std::pair<const void*, int>, std::size_t> pairingOf;
  std::map<const void*, PairedCalls> shifts;
  std::vector<const void*> shiftOrder;
  for (int i = 0; i < static_cast<int>(calls.size()); ++i) {
    const GroupedCall& c = calls[i];
    if (c.set == nullptr) continue;
    if (c.rank < 0 || c.rank >= c.ranks) {  // pairs with nothing, but still goes to NCCL
      PairedCalls alone;
      alone.set = c.set;
      alone.sendRecv = c.op == CollOp::kSendRecv;
      alone.members = {i};
      collectives.push_back(std::move(alone));
      continue;
    }
    if (c.op == CollOp::kSendRecv) {
      auto [it, added] = shifts.try_emplace(c.set);
      PairedCalls& p = it->second;
      if (added) {
        p.set = c.set;
        p.sendRecv = true;
        p.byRank.assign(c.ranks, -1);
        p.receiveByRank.assign(c.ranks, -1);
        shiftOrder.push_back(c.set);
      }
      std::vector<int>& slot = c.receive ? p.receiveByRank : p.byRank;
      // A second send (or receive) of one rank leaves the set's sends and receives to NCCL:
      // wholeShift then finds more members than the shift has.
      if (slot[c.rank] < 0) slot[c.rank] = i;
      p.members.push_back(i);
      continue;
    }
    const int k = made[{c.set, c.rank}]++;
    auto [it, added] = pairingOf.try_emplace({c.set, k}, collectives.size());
    if (added) {
      PairedCalls p;
      p.set = c.set;
      p.byRank.assign(c.ranks, -1);
      collectives.push_back(std::move(p));
    }
    PairedCalls& p = collectives[it->second];
    p.byRank[c.rank] = i;
    p.members.push_back(i);
  }
  for (PairedCalls& p : collectives) p.whole = wholeCollective(calls, p);
  for (const void* set : shiftOrder) {
    PairedCalls& p = shifts[set];
    p.whole = wholeShift(calls, p, static_cast<int>(p.byRank.size()));
    collectives.push_back(std::move(p));
  }
  return collectives;
}

}  // namespace gpupeer::nccl_api
