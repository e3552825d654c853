#include "spec/progress.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <time.h>

namespace ssmv::progress {
namespace {

using Clock = std::chrono::steady_clock;

// A track's current phase. `done` is read and written without the mutex (relaxed: a shown
// figure may lag by a few units); everything else under State::mutex.
struct Slot {
  bool active = false;
  std::string name, unit;
  int64_t total = 0;
  Clock::time_point start;
  double cpu_start = 0;
  std::atomic<int64_t> done{0};
  std::atomic<bool> counting{false};  // advance() counts only inside a phase
};

struct State {
  std::mutex mutex;
  Slot tracks[2];  // [Track]
  std::vector<PhaseTime> times;
  Slot& of(Track t) { return tracks[size_t(t)]; }
};

State& state() {
  static State s;
  return s;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// CPU seconds the process has used so far, on all its threads (user and system).
double process_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void end_locked(State& s, Track track) {
  Slot& t = s.of(track);
  if (!t.active) return;
  const double sec = seconds_since(t.start);
  const double cpu = process_cpu_seconds() - t.cpu_start;
  bool found = false;
  for (PhaseTime& k : s.times) {
    if (k.name == t.name && k.beside == (track == Track::beside)) {
      k.seconds += sec;
      k.cpu_seconds += cpu;
      found = true;
    }
  }
  if (!found) s.times.push_back({t.name, sec, cpu, track == Track::beside});
  t.active = false;
  t.counting.store(false, std::memory_order_relaxed);
}

// 1234 -> "1234", 12345 -> "12.3 k", 2.1e9 -> "2.10 G".
std::string amount(double v) {
  char buf[32];
  if (v < 1e4) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  const char* suffix[] = {"k", "M", "G", "T", "P"};
  int k = -1;
  while (v >= 1e3 && k < 4) {
    v /= 1e3;
    ++k;
  }
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, suffix[k]);
  return buf;
}

std::string duration(double s) {
  char buf[32];
  if (s < 100) {
    std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(s));
  } else if (s < 6000) {
    std::snprintf(buf, sizeof buf, "%.0f min", std::ceil(s / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  }
  return buf;
}

}  // namespace

void begin(const std::string& name, int64_t total, const std::string& unit, Track track) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  end_locked(s, track);
  Slot& t = s.of(track);
  t.active = true;
  t.name = name;
  t.unit = unit;
  t.total = total;
  t.start = Clock::now();
  t.cpu_start = process_cpu_seconds();
  t.done.store(0, std::memory_order_relaxed);
  t.counting.store(true, std::memory_order_relaxed);
}

void advance(int64_t n, Track track) {
  Slot& t = state().of(track);
  if (t.counting.load(std::memory_order_relaxed)) t.done.fetch_add(n, std::memory_order_relaxed);
}

void end(Track track) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  end_locked(s, track);
}

std::vector<PhaseTime> timings() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.times;
}

std::string line(const std::string& name, int64_t done, int64_t total, const std::string& unit, double seconds) {
  if (total <= 0 && done == 0) return name + ", " + duration(seconds);
  const double rate = seconds > 0 ? double(done) / seconds : 0.0;
  std::string r = name + " " + amount(double(done));
  if (total > 0) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * double(done) / double(total));
    r += " of " + amount(double(total)) + " " + unit + " (" + pct + ")";
  } else {
    r += " " + unit;
  }
  if (rate > 0) r += ", " + amount(rate) + "/s";
  if (total > 0 && rate > 0 && done < total) r += ", ETA " + duration(double(total - done) / rate);
  return r;
}

struct Display::Impl {
  std::FILE* out;
  std::string prefix;
  bool terminal;
  int delay_ms, period_ms;
  Clock::time_point created = Clock::now();
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  size_t shown = 0;  // characters of the line on a terminal, to clear it
  std::thread thread;

  void show() {
    State& s = state();
    std::string text;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      for (const Slot& t : s.tracks) {
        if (!t.active) continue;
        text += (text.empty() ? prefix + ": " : "; ") +
                line(t.name, t.done.load(std::memory_order_relaxed), t.total, t.unit, seconds_since(t.start));
      }
      if (text.empty()) return;
    }
    if (terminal) {
      const size_t pad = shown > text.size() ? shown - text.size() : 0;
      std::fprintf(out, "\r%s%s", text.c_str(), std::string(pad, ' ').c_str());
      shown = text.size();
    } else {
      std::fprintf(out, "%s\n", text.c_str());
    }
    std::fflush(out);
  }

  void run() {
    const auto period = std::chrono::milliseconds(period_ms > 0 ? period_ms : terminal ? 500 : 5000);
    auto next = created + std::chrono::milliseconds(delay_ms);
    std::unique_lock<std::mutex> lock(mutex);
    while (!stop) {
      if (wake.wait_until(lock, next, [this] { return stop; })) break;
      show();
      next += period;
    }
    if (terminal && shown > 0) {
      std::fprintf(out, "\r%s\r", std::string(shown, ' ').c_str());
      std::fflush(out);
    }
  }
};

Display::Display(std::FILE* out, std::string prefix, bool terminal, int delay_ms, int period_ms) : impl_(new Impl) {
  impl_->out = out;
  impl_->prefix = std::move(prefix);
  impl_->terminal = terminal;
  impl_->delay_ms = delay_ms;
  impl_->period_ms = period_ms;
  impl_->thread = std::thread([this] { impl_->run(); });
}

Display::~Display() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->wake.notify_all();
  impl_->thread.join();
  end(Track::beside);
  end(Track::main);
  delete impl_;
}

}  // namespace ssmv::progress
