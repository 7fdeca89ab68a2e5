#include "core/memory/simulated_device.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace wick::memory {

namespace {
// cudaMalloc returns addresses aligned to at least 256 bytes; the simulation uses 512, the
// caching allocator's block granularity, so split blocks stay aligned the same way.
constexpr size_t kAlignment = 512;
}  // namespace

SimulatedDevice::SimulatedDevice(size_t capacity, Backing backing, Device device)
    : capacity_(capacity), backing_(backing), device_(device), streams_(1) {}

SimulatedDevice::~SimulatedDevice() = default;

void* SimulatedDevice::malloc(size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (nbytes == 0) return nullptr;
  if (nbytes > capacity_ - static_cast<size_t>(in_use_)) return nullptr;
  size_t padded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* ptr;
  if (backing_ == Backing::Host) {
    ptr = std::aligned_alloc(kAlignment, padded);
    if (ptr == nullptr) return nullptr;
  } else {
    ptr = reinterpret_cast<void*>(next_virtual_address_);
    next_virtual_address_ += padded;
  }
  in_use_ += static_cast<int64_t>(nbytes);
  peak_ = std::max(peak_, in_use_);
  ++mallocs_;
  return ptr;
}

void SimulatedDevice::free(void* ptr, size_t nbytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ptr == nullptr) return;
  if (backing_ == Backing::Host) std::free(ptr);
  in_use_ -= static_cast<int64_t>(nbytes);
  ++frees_;
}

size_t SimulatedDevice::free_memory() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_ - static_cast<size_t>(in_use_);
}

StreamId SimulatedDevice::current_stream() const { return current_stream_.load(); }

SimulatedDevice::StreamState& SimulatedDevice::stream_state(StreamId stream) {
  check_value(stream < streams_.size(), "simulated device", "unknown stream ", stream);
  return streams_[stream];
}

SimulatedDevice::EventState& SimulatedDevice::event_state(EventId event) {
  check_value(event >= 1 && event <= events_.size() && events_[event - 1].in_use,
              "simulated device", "unknown event ", event);
  return events_[event - 1];
}

EventId SimulatedDevice::record_event(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_state(stream);
  EventId id;
  if (!free_events_.empty()) {
    id = free_events_.back();
    free_events_.pop_back();
  } else {
    events_.emplace_back();
    id = events_.size();
  }
  events_[id - 1] = EventState{stream, s.enqueued, true};
  ++events_recorded_;
  return id;
}

bool SimulatedDevice::query_event(EventId event) {
  std::lock_guard<std::mutex> lock(mutex_);
  EventState& e = event_state(event);
  return streams_[e.stream].completed >= e.target;
}

void SimulatedDevice::synchronize_event(EventId event) {
  std::lock_guard<std::mutex> lock(mutex_);
  EventState& e = event_state(event);
  // Waiting for an event means the device ran the stream at least up to it.
  StreamState& s = streams_[e.stream];
  s.completed = std::max(s.completed, e.target);
}

void SimulatedDevice::release_event(EventId event) {
  std::lock_guard<std::mutex> lock(mutex_);
  event_state(event).in_use = false;
  free_events_.push_back(event);
}

StreamId SimulatedDevice::create_stream() {
  std::lock_guard<std::mutex> lock(mutex_);
  streams_.emplace_back();
  return streams_.size() - 1;
}

void SimulatedDevice::set_current_stream(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  stream_state(stream);
  current_stream_ = stream;
}

void SimulatedDevice::enqueue_work(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stream_state(stream).enqueued;
}

void SimulatedDevice::finish_work(StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  StreamState& s = stream_state(stream);
  s.completed = s.enqueued;
}

void SimulatedDevice::finish_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StreamState& s : streams_) s.completed = s.enqueued;
}

int64_t SimulatedDevice::num_mallocs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mallocs_;
}
int64_t SimulatedDevice::num_frees() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return frees_;
}
int64_t SimulatedDevice::bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}
int64_t SimulatedDevice::peak_bytes_in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}
int64_t SimulatedDevice::num_events_recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_recorded_;
}

}  // namespace wick::memory
