// Hands the blocks of one file from the thread that reads them (the log
// analyser) to one thread that extracts the decision tree's facts from them,
// so the two halves of `diagnose --log` on one large file use two cores. One
// consumer takes the blocks in order, so the facts are exactly those of one
// thread. Bounded: at most kDepth blocks wait (4 MiB each from the reader);
// their buffers are reused, not reallocated.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ccdiag {

class BlockPipe {
 public:
  static constexpr size_t kDepth = 4;

  explicit BlockPipe(std::function<void(std::string_view)> consume)
      : consume_(std::move(consume)), thread_([this] { run(); }) {}
  ~BlockPipe() { close(); }
  BlockPipe(const BlockPipe&) = delete;
  BlockPipe& operator=(const BlockPipe&) = delete;

  // Copies `block` for the consumer; waits while kDepth blocks are queued.
  void push(std::string_view block) {
    std::unique_lock<std::mutex> lk(mu_);
    room_.wait(lk, [this] { return queue_.size() < kDepth; });
    std::string buf;
    if (!free_.empty()) {
      buf = std::move(free_.back());
      free_.pop_back();
    }
    lk.unlock();
    // Blocks differ by a line's length: room for a larger one, so a reused
    // buffer is not reallocated (a fresh 4 MiB is a thousand page faults).
    if (buf.capacity() < block.size()) buf.reserve(block.size() + block.size() / 4);
    buf.assign(block.data(), block.size());
    lk.lock();
    queue_.push_back(std::move(buf));
    ready_.notify_one();
  }

  // After the last block: returns once the consumer has taken every block.
  void close() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      closed_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    for (;;) {
      std::unique_lock<std::mutex> lk(mu_);
      ready_.wait(lk, [this] { return !queue_.empty() || closed_; });
      if (queue_.empty()) return;  // closed and drained
      std::string buf = std::move(queue_.front());
      queue_.pop_front();
      room_.notify_one();
      lk.unlock();
      consume_(buf);
      lk.lock();
      free_.push_back(std::move(buf));
    }
  }

  std::function<void(std::string_view)> consume_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::string> queue_;
  std::vector<std::string> free_;
  bool closed_ = false;
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace ccdiag
