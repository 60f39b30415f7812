// NCCL_DEBUG=INFO logs: which rank pairs NCCL connected by which transport, read from
//   host:pid:tid [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read
//   host:pid:tid [0] NCCL INFO Channel 00/0 : 0[0] -> 4[4] via SHM/direct/direct
//   host:pid:tid [7] NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3
// and where P2P was expected (two GPUs of one host) but SHM or the network carried the data,
// with the reasons the same log gives (environment, "P2P is disabled between ...").
#include <fmt/format.h>
#include <re2/re2.h>

#include <map>
#include <set>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {

// A channel line read by hand from "Channel " on: the parser's most frequent line, on which
// RE2 with six groups costs about 1 us.
namespace {

ChannelRead readChannelAt(std::string_view s, NcclChannel& out) {
  std::size_t i = 0;
  auto literal = [&](std::string_view l) {
    if (s.substr(i, l.size()) != l) return false;
    i += l.size();
    return true;
  };
  auto span = [&](auto accepts) {  // one or more characters `accepts` takes; "" when none
    std::size_t start = i;
    while (i < s.size() && accepts(s[i])) ++i;
    return s.substr(start, i - start);
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto hexOrX = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x';
  };
  auto nonSpace = [](char c) { return c != ' '; };
  if (!literal("Channel ") || span(digit).empty()) return ChannelRead::kNo;
  if (i + 1 < s.size() && s[i] == '/' && digit(s[i + 1])) {  // (?:/\d+)?
    ++i;
    span(digit);
  }
  if (!literal(" : ")) return ChannelRead::kNo;
  std::string_view a = span(digit), aDev, b, bDev;
  if (a.empty() || !literal("[") || (aDev = span(hexOrX)).empty() || !literal("] -> ")) return ChannelRead::kNo;
  if ((b = span(digit)).empty() || !literal("[") || (bDev = span(hexOrX)).empty() || !literal("]"))
    return ChannelRead::kNo;
  std::string_view dir;
  for (std::string_view d : {"send", "receive"})  // (?: \[(send|receive)\])?
    if (s.substr(i, d.size() + 3) == " [" + std::string(d) + "]") {
      dir = d;
      i += d.size() + 3;
      break;
    }
  if (!literal(" via ")) return ChannelRead::kNo;
  std::string_view via;
  if (s.substr(i, 20) == "direct shared memory") {
    via = s.substr(i, 20);
  } else {
    std::size_t start = i;
    bool family = false;
    for (std::string_view f : {"P2P/", "SHM/", "NET/", "COLLNET/", "NVLS/"})
      if (literal(f)) {
        family = true;
        break;
      }
    if (!family || span(nonSpace).empty()) return ChannelRead::kNo;  // [^ ]+
    if (s.substr(i, 8) == " pointer") {                              // (?: pointer)?[^ ]*
      i += 8;
      span(nonSpace);
    }
    via = s.substr(start, i - start);
  }
  for (char c : via)
    if (static_cast<unsigned char>(c) >= 0x80) return ChannelRead::kAskTheRegex;
  out = {std::string(a), std::string(aDev), std::string(b), std::string(bDev), std::string(dir), std::string(via)};
  return ChannelRead::kYes;
}

}  // namespace

ChannelRead readNcclChannel(std::string_view line, NcclChannel& out) {
  for (std::size_t at = line.find("Channel "); at != std::string_view::npos; at = line.find("Channel ", at + 1))
    if (ChannelRead r = readChannelAt(line.substr(at), out); r != ChannelRead::kNo) return r;
  return ChannelRead::kNo;
}

namespace {

constexpr std::size_t kMaxPairs = 16384;

struct Patterns {
  RE2 channel{kNcclChannelPattern};
  RE2 init{R"(comm 0x[0-9a-fA-F]+ rank (\d+) nranks \d+ cudaDev (\d+))"};
  RE2 env{
      R"((NCCL_(?:P2P_DISABLE|P2P_LEVEL|SHM_DISABLE|CUMEM_ENABLE|P2P_USE_CUDA_MEMCPY|NET)) set by environment to ([^ ]*))"};
  // NCCL >= 2.12 and older wordings of "the driver or NVML says no P2P for this pair".
  RE2 p2pDisabled{
      R"((?:P2P is disabled between (NVLINK )?connected GPUs|Could not enable P2P between dev) (\d+)(?:\(=[0-9a-fA-F]+\))? and (?:dev )?(\d+))"};
  RE2 ipcFailure{R"((failed to open CUDA IPC handle|pidfd_getfd|cuMemImportFromShareableHandle)[^\n]{0,80})"};
};

const Patterns& patterns() {
  static const Patterns p;
  return p;
}

// RE2::PartialMatch for a pattern every match of which starts with `literal`: the pattern is
// tried anchored at each occurrence of the literal, left to right, so the first success is the
// leftmost match an unanchored search finds, with the same groups; RE2 then skips its forward
// and backward scans of the whole line to place the match, most of the cost on a short line.
template <class... Out>
bool matchFromLiteral(std::string_view line, std::string_view literal, const RE2& re, Out*... out) {
  re2::StringPiece groups[sizeof...(Out) + 1];
  for (std::size_t at = line.find(literal); at != std::string_view::npos; at = line.find(literal, at + 1)) {
    if (!re.Match(line, at, line.size(), RE2::ANCHOR_START, groups, sizeof...(Out) + 1)) continue;
    int k = 1;
    auto take = [&groups, &k](std::string* o) { o->assign(groups[k].data(), groups[k].size()), ++k; };
    (take(out), ...);  // a comma fold: left to right
    return true;
  }
  return false;
}

// "P2P/IPC/read" -> "P2P/IPC/read", "NET/IB/0/GDRDMA" -> "NET/IB", "SHM/direct/direct" -> "SHM";
// NCCL before 2.5 wrote "direct shared memory" for SHM.
std::string label(const std::string& via) {
  if (via == "direct shared memory") return "SHM";
  std::string family = via.substr(0, via.find('/'));
  if (family == "SHM") return "SHM";
  std::size_t second = via.find('/');
  if (second == std::string::npos) return family;
  std::string mech = via.substr(second + 1, via.find('/', second + 1) - second - 1);
  std::string out = family + "/" + mech;
  if (family == "P2P" && via.find("/read") != std::string::npos) out += "/read";
  return out;
}

struct Connection {
  std::set<std::string> transports;
  int channels = 0;
};

class NcclTransportParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "NCCL_DEBUG=INFO log"; }
  // The literals feed() looks for before each pattern: an INFO line with none is not needed.
  std::vector<std::string> triggers() const override {
    return {" via ",      "comm 0x",     "set by environment", "P2P is disabled", "Could not enable P2P",
            "IPC handle", "pidfd_getfd", "cuMemImport"};
  }

  void feed(std::string_view line, std::uint64_t n) override {
    // Each pattern runs only on lines holding its literal, so a long INFO log costs a few
    // substring searches per line, not six regex searches.
    std::size_t nccl = line.find(" NCCL ");
    if (nccl == std::string_view::npos && line.find("NCCL INFO") == std::string_view::npos) return;
    const Patterns& p = patterns();
    auto has = [&line](std::string_view literal) { return line.find(literal) != std::string_view::npos; };
    std::string rank, dev, name, value, nvl, g1, g2;
    NcclChannel c;
    ChannelRead channel = has(" via ") ? readNcclChannel(line, c) : ChannelRead::kNo;
    if (channel == ChannelRead::kAskTheRegex &&
        !matchFromLiteral(line, "Channel ", p.channel, &c.a, &c.aDev, &c.b, &c.bDev, &c.dir, &c.via))
      channel = ChannelRead::kNo;
    if (channel != ChannelRead::kNo) {
      connection(std::stoi(c.a.substr(0, 9)), c.aDev, std::stoi(c.b.substr(0, 9)), c.bDev, c.dir, c.via,
                 hostOf(line, nccl), n);
    } else if (has("comm 0x") && matchFromLiteral(line, "comm 0x", p.init, &rank, &dev)) {
      placeRank(std::stoi(rank.substr(0, 9)), dev, hostOf(line, nccl));
    } else if (has("set by environment") && matchFromLiteral(line, "NCCL_", p.env, &name, &value)) {
      if (env_.size() < 16) env_[name] = value;
      if (settingsLine_ == 0) settingsLine_ = n;
    } else if ((has("P2P is disabled") || has("Could not enable P2P")) &&
               RE2::PartialMatch(line, p.p2pDisabled, &nvl, &g1, &g2)) {
      if (settingsLine_ == 0) settingsLine_ = n;
      if (p2pDisabled_.size() < 64)
        p2pDisabled_.insert(fmt::format("GPU{} and GPU{}{}", g1, g2, nvl.empty() ? "" : " (NVLink)"));
    } else if ((has("IPC handle") || has("pidfd_getfd") || has("cuMemImport")) &&
               RE2::PartialMatch(line, p.ipcFailure, &name)) {
      if (ipcFailures_.size() < 8) ipcFailures_.insert(std::string(trim(line.substr(line.find(name)).substr(0, 160))));
    }
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0) {
      settingsOnly(out);
      return;
    }
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    std::map<std::string, std::vector<std::string>> byTransport;
    std::vector<std::string> notP2p, sameHostNet;
    int p2pPairs = 0, shmPairs = 0, netPairs = 0;
    for (const auto& [pair, c] : pairs_) {
      std::string name = fmt::format("{}->{}", rankName(pair.first), rankName(pair.second));
      bool p2p = false, shm = false, net = false;
      for (const std::string& t : c.transports) {
        if (byTransport[t].size() < 4096) byTransport[t].push_back(name);
        p2p = p2p || t.rfind("P2P", 0) == 0;
        shm = shm || t == "SHM";
        net = net || t.rfind("NET", 0) == 0 || t.rfind("COLLNET", 0) == 0;
      }
      p2pPairs += p2p;
      shmPairs += shm && !p2p;
      netPairs += net;
      if (shm && !p2p) notP2p.push_back(name + " via SHM");
      if (net && sameHost(pair.first, pair.second)) sameHostNet.push_back(name + " via NET");
    }
    for (const auto& [t, list] : byTransport)
      f.details.push_back(fmt::format("{}: {} connection(s): {}", t, list.size(), joinLimited(list, 8)));
    if (pairs_.size() >= kMaxPairs) f.details.push_back(fmt::format("(only the first {} connections kept)", kMaxPairs));
    f.title = fmt::format("NCCL connected {} rank pair(s): {} by P2P, {} by SHM, {} by the network", pairs_.size(),
                          p2pPairs, shmPairs, netPairs);
    if (!notP2p.empty() || !sameHostNet.empty()) {
      f.severity = Severity::kWarning;
      notP2p.insert(notP2p.end(), sameHostNet.begin(), sameHostNet.end());
      f.details.push_back("P2P expected but not used (both GPUs in one host): " + joinLimited(notP2p, 8));
      explainWhy(f, !sameHostNet.empty());
    }
    out.push_back(std::move(f));
  }

 private:
  // A log cut before the channel lines may still say that P2P is off and why.
  void settingsOnly(std::vector<ToolOutputFinding>& out) const {
    bool p2pOff = !p2pDisabled_.empty();
    for (const auto& [name, value] : env_)
      p2pOff = p2pOff || (name == "NCCL_P2P_DISABLE" && value != "0") ||
               (name == "NCCL_P2P_LEVEL" && (value == "LOC" || value == "0"));
    if (!p2pOff || settingsLine_ == 0) return;
    ToolOutputFinding f{std::string(tool()),
                        Severity::kWarning,
                        "NCCL was told not to use P2P, or refused it (no channel lines in this log)",
                        {},
                        {},
                        settingsLine_};
    explainWhy(f, false);
    out.push_back(std::move(f));
  }

  // "host:pid:tid [dev] NCCL INFO ..." -> "host"; "" when the line has no such prefix.
  static std::string hostOf(std::string_view line, std::size_t ncclAt) {
    if (ncclAt == std::string_view::npos) return "";
    std::string_view before = line.substr(0, ncclAt);
    std::size_t bracket = before.rfind(" [");
    if (bracket == std::string_view::npos) return "";
    std::string_view token = before.substr(0, bracket);
    token = token.substr(token.rfind(' ') == std::string_view::npos ? 0 : token.rfind(' ') + 1);
    std::size_t colon = token.find(':');
    if (colon == std::string_view::npos || colon == 0) return "";
    return std::string(token.substr(0, colon));
  }

  void connection(int a, const std::string& aDev, int b, const std::string& bDev, const std::string& dir,
                  const std::string& via, const std::string& host, std::uint64_t n) {
    if (firstLine_ == 0) firstLine_ = n;
    auto it = pairs_.find({a, b});
    if (it == pairs_.end()) {
      if (pairs_.size() >= kMaxPairs) return;
      it = pairs_.emplace(std::pair{a, b}, Connection{}).first;
    }
    // A "[receive]" line is printed by the receiving rank, every other one by the sender.
    placeRank(a, aDev, dir == "receive" ? "" : host);
    placeRank(b, bDev, dir == "receive" ? host : "");
    if (it->second.transports.size() < 4) it->second.transports.insert(label(via));
    ++it->second.channels;
  }

  void placeRank(int rank, const std::string& dev, const std::string& host) {
    if (device_.size() >= kMaxPairs) return;
    if (!host.empty()) hostOf_.try_emplace(rank, host);
    device_.try_emplace(rank, dev);
  }

  bool sameHost(int a, int b) const {
    auto ha = hostOf_.find(a), hb = hostOf_.find(b);
    return ha != hostOf_.end() && hb != hostOf_.end() && ha->second == hb->second;
  }

  std::string rankName(int rank) const {
    auto d = device_.find(rank);
    return d == device_.end() ? std::to_string(rank) : fmt::format("{}[{}]", rank, d->second);
  }

  void explainWhy(ToolOutputFinding& f, bool netOnOneHost) const {
    std::vector<std::string> seen;
    auto kb = [&f](const char* id) { addKbId(f, id); };
    for (const auto& [name, value] : env_) {
      seen.push_back(fmt::format("{}={} set", name, value));
      if (name == "NCCL_P2P_DISABLE") kb("nccl/p2p-disabled-by-environment");
      if (name == "NCCL_P2P_LEVEL") kb("nccl/p2p-level-semantics");
      if (name == "NCCL_SHM_DISABLE") kb("nccl/devshm-exhausted");
    }
    if (!p2pDisabled_.empty()) {
      seen.push_back("the driver refuses P2P between " +
                     joinLimited(std::vector<std::string>(p2pDisabled_.begin(), p2pDisabled_.end()), 6) +
                     " (NVML P2P status not OK: consumer GPUs, ACS/IOMMU, a VM)");
      kb("nccl/p2p-disabled-info");
      kb("cuda/peer-access-unsupported-by-hardware");
      kb("platform/acs-redirect");
    }
    for (const std::string& failure : ipcFailures_) seen.push_back("handle exchange failed: " + failure);
    if (!ipcFailures_.empty()) kb("nccl/ipc-across-containers");
    if (netOnOneHost) {
      seen.push_back(
          "ranks of one host talk over the network: they run in separate containers or PID/IPC "
          "namespaces (NCCL treats them as different hosts), or both P2P and SHM are disabled");
      kb("nccl/ipc-across-containers");
    }
    if (!seen.empty()) {
      f.details.push_back("reasons in this log: " + joinLimited(seen, 8));
      return;
    }
    f.details.push_back(
        "nothing in this log says why; usual reasons: the pair's PCIe path crosses the CPU (PHB/NODE/SYS in "
        "nvidia-smi topo -m; NCCL's default P2P level is PXB), NCCL_P2P_DISABLE or NCCL_P2P_LEVEL set, ACS or "
        "the IOMMU blocking peer traffic (the driver then reports no P2P), or ranks in containers without "
        "--ipc=host / a shared PID namespace");
    kb("nccl/p2p-level-semantics");
    kb("nccl/p2p-disabled-by-environment");
    kb("platform/acs-redirect");
    kb("nccl/ipc-across-containers");
  }

  std::map<std::pair<int, int>, Connection> pairs_;
  std::map<int, std::string> hostOf_, device_;
  std::map<std::string, std::string> env_;
  std::set<std::string> p2pDisabled_, ipcFailures_;
  std::uint64_t firstLine_ = 0;
  std::uint64_t settingsLine_ = 0;  // first environment or "P2P is disabled" line
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeNcclTransportParser() { return std::make_unique<NcclTransportParser>(); }

}  // namespace gpupeer::tool_output
