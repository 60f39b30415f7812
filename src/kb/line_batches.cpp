#include "line_batches.hpp"

#include <system_error>

namespace gpupeer::kb_detail {

bool readLineBatch(LogLineReader& reader, LineBatch& batch, std::size_t bytes, std::string& piece) {
  std::uint64_t lineNumber = 0;
  while (batch.text.size() < bytes) {
    if (!reader.next(piece, lineNumber)) return false;
    batch.lines.push_back({batch.text.size(), piece.size(), lineNumber, 0, 0});
    batch.text += piece;
  }
  return true;
}

OrderedBatchPool::OrderedBatchPool(unsigned workers, std::size_t depth, std::function<void(LineBatch&, unsigned)> match)
    : depth_(depth > 0 ? depth : 1), match_(std::move(match)) {
  for (unsigned w = 0; w < workers; ++w) {
    try {
      threads_.emplace_back([this, w] { work(w); });
    } catch (const std::system_error&) {  // no more threads allowed: run with those started
      break;
    }
  }
}

OrderedBatchPool::~OrderedBatchPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  workReady_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::unique_ptr<LineBatch> OrderedBatchPool::spare() {
  if (spares_.empty()) return std::make_unique<LineBatch>();
  std::unique_ptr<LineBatch> batch = std::move(spares_.back());
  spares_.pop_back();
  batch->clear();
  return batch;
}

void OrderedBatchPool::submit(std::unique_ptr<LineBatch> batch) {
  auto slot = std::make_unique<Slot>();
  slot->batch = std::move(batch);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(slot.get());
    inFlight_.push_back(std::move(slot));
  }
  workReady_.notify_one();
}

std::unique_ptr<LineBatch> OrderedBatchPool::takeOldest() {
  Slot& oldest = *inFlight_.front();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    slotDone_.wait(lock, [&oldest] { return oldest.done; });
  }
  std::unique_ptr<LineBatch> batch = std::move(oldest.batch);
  inFlight_.pop_front();
  return batch;
}

void OrderedBatchPool::recycle(std::unique_ptr<LineBatch> batch) { spares_.push_back(std::move(batch)); }

void OrderedBatchPool::work(unsigned worker) {
  for (;;) {
    Slot* slot = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      workReady_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      slot = waiting_.front();
      waiting_.pop_front();
    }
    // Nothing may leave a thread by exception (matching throws at most bad_alloc): the batch
    // is marked and its owner reports it.
    try {
      match_(*slot->batch, worker);
    } catch (...) {
      slot->batch->failed = true;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot->done = true;
    }
    slotDone_.notify_all();
  }
}

}  // namespace gpupeer::kb_detail
