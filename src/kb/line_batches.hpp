#pragma once
// Matching a streamed log on several cores while its lines are still consumed one by one, in
// order: one thread reads lines into batches, worker threads match whole batches, and the
// reading thread takes the matched batches back in the order it read them. The tool-output
// parsers after the matcher are stateful and must see every line in order; the matching
// before them is per line and needs no order, so only it is spread over threads.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "log_lines.hpp"

namespace gpupeer::kb_detail {

/// Consecutive log lines (or pieces of lines) and, once matched, the pattern indices each
/// matches. Lines are stored back to back in `text`; matching may shorten a line in place
/// (normalisation never lengthens it).
struct LineBatch {
  struct Line {
    std::size_t offset = 0;
    std::size_t size = 0;
    std::uint64_t number = 0;    // 1-based; pieces of one line share it
    std::size_t firstIndex = 0;  // this line's matches: indices[firstIndex, endIndex)
    std::size_t endIndex = 0;
  };
  std::string text;
  std::vector<Line> lines;
  std::vector<int> indices;
  bool failed = false;  // matching it threw (out of memory)

  void clear() {
    text.clear();
    lines.clear();
    indices.clear();
    failed = false;
  }
  std::string_view view(const Line& line) const { return std::string_view(text).substr(line.offset, line.size); }
};

/// Appends the next lines of `reader` to `batch` until it holds `bytes` of them (a line piece
/// may take it past; `piece` is a buffer to reuse); false when the input ended (or failed)
/// first.
bool readLineBatch(LogLineReader& reader, LineBatch& batch, std::size_t bytes, std::string& piece);

/// Worker threads that run `match` on submitted batches, which come back in submission order.
/// At most `depth` batches are in flight (submitted and not yet taken back), so memory stays
/// bounded whatever the input's size. Every method is called by one thread (the owner's); the
/// destructor stops and joins the workers, taking back nothing.
class OrderedBatchPool {
 public:
  /// `match(batch, worker)`: `worker` (0 .. workers-1) tells which thread runs it, so it can
  /// use per-thread buffers. May start fewer threads than asked when the system refuses more;
  /// started() says how many run (0: use the batches inline instead).
  OrderedBatchPool(unsigned workers, std::size_t depth, std::function<void(LineBatch&, unsigned)> match);
  ~OrderedBatchPool();
  OrderedBatchPool(const OrderedBatchPool&) = delete;
  OrderedBatchPool& operator=(const OrderedBatchPool&) = delete;

  unsigned started() const { return static_cast<unsigned>(threads_.size()); }
  /// Whether `depth` batches are in flight: take one back before submitting another.
  bool full() const { return inFlight_.size() >= depth_; }
  bool empty() const { return inFlight_.empty(); }
  /// An empty batch to fill: one taken back earlier, or a new one.
  std::unique_ptr<LineBatch> spare();
  void submit(std::unique_ptr<LineBatch> batch);
  /// Waits for the oldest batch in flight to be matched and returns it (not empty()).
  std::unique_ptr<LineBatch> takeOldest();
  /// Gives a consumed batch back for reuse by spare().
  void recycle(std::unique_ptr<LineBatch> batch);

 private:
  struct Slot {
    std::unique_ptr<LineBatch> batch;
    bool done = false;
  };
  void work(unsigned worker);

  std::size_t depth_;
  std::function<void(LineBatch&, unsigned)> match_;
  std::mutex mutex_;
  std::condition_variable workReady_;           // a slot waits for a worker, or stopping_
  std::condition_variable slotDone_;            // a worker finished a slot
  std::deque<std::unique_ptr<Slot>> inFlight_;  // submission order; changed by the owner only
  std::deque<Slot*> waiting_;                   // of inFlight_, not yet taken by a worker
  std::vector<std::unique_ptr<LineBatch>> spares_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gpupeer::kb_detail
