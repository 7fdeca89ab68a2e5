// Lab 08: fill in each gap; ddp_lab.h describes each piece.
#include "ddp_lab.h"

#include <algorithm>
#include <vector>

#include "core/ops.h"
#include "lab.h"

namespace lab08 {

std::pair<int64_t, int64_t> chunk(int64_t n, int parts, int c) {
  int64_t base = n / parts, extra = n % parts;
  return {c * base + std::min<int64_t>(c, extra), base + (c < extra ? 1 : 0)};
}

void ring_all_reduce(float* data, int64_t n, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1 || n == 0) return;
  int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  std::vector<float> incoming(chunk(n, size, 0).second);
  // BEGIN SOLUTION: ring_all_reduce: N-1 reduce-scatter steps (MPI_Sendrecv + add), N-1 all-gather
  for (int step = 0; step < size - 1; ++step) {
    auto [send_off, send_len] = chunk(n, size, (rank - step + size) % size);
    auto [recv_off, recv_len] = chunk(n, size, (rank - step - 1 + size) % size);
    MPI_Sendrecv(data + send_off, int(send_len), MPI_FLOAT, right, step, incoming.data(),
                 int(recv_len), MPI_FLOAT, left, step, comm, MPI_STATUS_IGNORE);
    for (int64_t i = 0; i < recv_len; ++i) data[recv_off + i] += incoming[i];
  }
  for (int step = 0; step < size - 1; ++step) {
    auto [send_off, send_len] = chunk(n, size, (rank + 1 - step + size) % size);
    auto [recv_off, recv_len] = chunk(n, size, (rank - step + size) % size);
    MPI_Sendrecv(data + send_off, int(send_len), MPI_FLOAT, right, size + step, data + recv_off,
                 int(recv_len), MPI_FLOAT, left, size + step, comm, MPI_STATUS_IGNORE);
  }
  // END SOLUTION
}

std::vector<std::vector<size_t>> assign_buckets(const std::vector<size_t>& bytes, size_t cap,
                                                size_t first_cap) {
  std::vector<std::vector<size_t>> buckets;
  // BEGIN SOLUTION: assign_buckets: walk i = last..0, add to the open bucket, close at its limit
  std::vector<size_t> open;
  size_t filled = 0;
  for (size_t i = bytes.size(); i-- > 0;) {
    open.push_back(i);
    filled += bytes[i];
    if (filled >= (buckets.empty() ? first_cap : cap)) {
      buckets.push_back(open);
      open.clear();
      filled = 0;
    }
  }
  if (!open.empty()) buckets.push_back(open);
  // END SOLUTION
  return buckets;
}

GradBucketer::GradBucketer(std::vector<wick::Tensor> ps, size_t cap, size_t first_cap)
    : params(std::move(ps)) {
  std::vector<size_t> bytes;
  for (const wick::Tensor& p : params) bytes.push_back(p.nbytes());
  buckets = assign_buckets(bytes, cap, first_cap);
  bucket_of.resize(params.size());
  offset_of.resize(params.size());
  for (size_t b = 0; b < buckets.size(); ++b) {
    int64_t elements = 0;
    for (size_t i : buckets[b]) {
      bucket_of[i] = b;
      offset_of[i] = elements;
      elements += params[i].numel();
    }
    flat.push_back(wick::zeros({elements}));
  }
  pending.resize(buckets.size());
  works.resize(buckets.size());
  times.resize(buckets.size());
  for (size_t b = 0; b < buckets.size(); ++b) pending[b] = buckets[b].size();
  for (size_t i = 0; i < params.size(); ++i) {
    params[i].register_post_accumulate_grad_hook(
        [this, i](const wick::Tensor&) { on_grad_ready(i); });
  }
}

void GradBucketer::on_grad_ready(size_t index) {
  // BEGIN SOLUTION: on_grad_ready: copy grad/world into the slot; when full, launch in order
  size_t b = bucket_of[index];
  int world = wick::distributed::get_world_size();
  const wick::Tensor& grad = params[index].grad();
  const float* src = grad.contiguous().data<float>();
  float* dst = flat[b].data<float>() + offset_of[index];
  for (int64_t e = 0; e < grad.numel(); ++e) dst[e] = src[e] / float(world);
  if (--pending[b] == 0) times[b].ready_ms = ms_since_start();
  while (next_to_launch < buckets.size() && pending[next_to_launch] == 0) {
    times[next_to_launch].launched_ms = ms_since_start();
    works[next_to_launch] =
        wick::distributed::all_reduce(flat[next_to_launch], wick::distributed::ReduceOp::Sum, true);
    ++next_to_launch;
  }
  // END SOLUTION
}

void GradBucketer::finish() {
  // BEGIN SOLUTION: finish: wait each work, copy slices back into each .grad, reset the counters
  for (size_t b = 0; b < buckets.size(); ++b) {
    works[b]->wait();
    times[b].done_ms = ms_since_start();
    for (size_t i : buckets[b]) {
      wick::Tensor grad = params[i].grad();
      const float* src = flat[b].data<float>() + offset_of[i];
      float* dst = grad.data<float>();
      for (int64_t e = 0; e < grad.numel(); ++e) dst[e] = src[e];
    }
    pending[b] = buckets[b].size();
    works[b].reset();
  }
  next_to_launch = 0;
  // END SOLUTION
}

}  // namespace lab08
