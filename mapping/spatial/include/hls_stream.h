// Portable C-simulation stand-in for the Vitis HLS stream header (stratoflow / StencilFlow).
//
// hls::stream<T> is declared as in Vitis (hls::stream<T> s("name");) and is a bounded FIFO with
// blocking read and write; the generated kernel sets each depth to its STREAM pragma's depth
// (set_depth) before the processes start. Every dataflow process runs in its own thread
// (hls::sim::Dataflow). A global monitor counts live and blocked processes: when every live
// process is blocked, the program is deadlocked, and the monitor prints the blocked channels and
// exits with status 3 (never hangs). Synthesis uses the vendor's <hls_stream.h> instead: the
// generated code includes this file only when __SYNTHESIS__ is not defined.
#pragma once

#ifdef __SYNTHESIS__
#error "stratoflow's hls_stream.h is for C simulation only; synthesise against the Vitis HLS include directory"
#endif

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hls {
namespace sim {

class StreamBase;

struct Monitor {
  std::mutex mutex;
  int live = 0;
  int blocked = 0;
  std::vector<StreamBase*> streams;
  static Monitor& get() {
    static Monitor m;
    return m;
  }
  void check_deadlock_locked();
};

class StreamBase {
 public:
  std::string name;
  std::size_t depth;
  int waiting_readers = 0;
  int waiting_writers = 0;
  std::condition_variable cv;
  StreamBase(const char* n, std::size_t d) : name(n), depth(d < 1 ? 1 : d) {
    std::lock_guard<std::mutex> lock(Monitor::get().mutex);
    Monitor::get().streams.push_back(this);
  }
  virtual ~StreamBase() {
    std::lock_guard<std::mutex> lock(Monitor::get().mutex);
    auto& v = Monitor::get().streams;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i] == this) {
        v.erase(v.begin() + static_cast<long>(i));
        break;
      }
  }
  virtual std::size_t size_locked() const = 0;
};

inline void Monitor::check_deadlock_locked() {
  if (live > 0 && blocked == live) {
    std::fprintf(stderr, "DEADLOCK: all %d dataflow processes are blocked; blocked channels:", live);
    for (StreamBase* s : streams) {
      if (s->waiting_writers)
        std::fprintf(stderr, " %s full (%zu/%zu tokens, writer waits);", s->name.c_str(), s->size_locked(), s->depth);
      if (s->waiting_readers)
        std::fprintf(stderr, " %s empty (reader waits);", s->name.c_str());
    }
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
    std::_Exit(3);
  }
}

// Runs each process of a dataflow region in its own thread.
class Dataflow {
 public:
  void spawn(std::function<void()> fn) { fns_.push_back(std::move(fn)); }
  void run() {
    Monitor& m = Monitor::get();
    {
      std::lock_guard<std::mutex> lock(m.mutex);
      m.live += static_cast<int>(fns_.size());
    }
    std::vector<std::thread> threads;
    for (auto& fn : fns_)
      threads.emplace_back([&m, fn]() {
        fn();
        std::lock_guard<std::mutex> lock(m.mutex);
        m.live -= 1;
        m.check_deadlock_locked();
      });
    for (auto& t : threads) t.join();
  }

 private:
  std::vector<std::function<void()>> fns_;
};

}  // namespace sim

template <class T>
class stream : public sim::StreamBase {
 public:
  explicit stream(const char* name = "stream", std::size_t depth = 2) : sim::StreamBase(name, depth) {}
  // The FIFO's capacity in tokens (the STREAM pragma's depth); call before any process runs.
  void set_depth(std::size_t d) {
    std::lock_guard<std::mutex> lock(sim::Monitor::get().mutex);
    depth = d < 1 ? 1 : d;
  }
  void write(const T& v) {
    sim::Monitor& m = sim::Monitor::get();
    std::unique_lock<std::mutex> lock(m.mutex);
    while (q_.size() >= depth) {
      waiting_writers += 1;
      m.blocked += 1;
      m.check_deadlock_locked();
      const unsigned long gen = gen_w_;
      while (gen_w_ == gen) cv.wait(lock);  // released by a read (ignores spurious wake-ups)
    }
    q_.push_back(v);
    release_readers(m);
  }
  T read() {
    sim::Monitor& m = sim::Monitor::get();
    std::unique_lock<std::mutex> lock(m.mutex);
    while (q_.empty()) {
      waiting_readers += 1;
      m.blocked += 1;
      m.check_deadlock_locked();
      const unsigned long gen = gen_r_;
      while (gen_r_ == gen) cv.wait(lock);  // released by a write
    }
    T v = q_.front();
    q_.pop_front();
    release_writers(m);
    return v;
  }
  void read(T& v) { v = read(); }
  bool empty() {
    std::lock_guard<std::mutex> lock(sim::Monitor::get().mutex);
    return q_.empty();
  }
  bool full() {
    std::lock_guard<std::mutex> lock(sim::Monitor::get().mutex);
    return q_.size() >= depth;
  }
  std::size_t size_locked() const override { return q_.size(); }

 private:
  // A released waiter no longer counts as blocked, even before its thread wakes up.
  void release_readers(sim::Monitor& m) {
    if (waiting_readers) {
      m.blocked -= waiting_readers;
      waiting_readers = 0;
      gen_r_ += 1;
      cv.notify_all();
    }
  }
  void release_writers(sim::Monitor& m) {
    if (waiting_writers) {
      m.blocked -= waiting_writers;
      waiting_writers = 0;
      gen_w_ += 1;
      cv.notify_all();
    }
  }
  std::deque<T> q_;
  unsigned long gen_r_ = 0;
  unsigned long gen_w_ = 0;
};

}  // namespace hls
