// CUDAGraph (cuda/api.h): stream capture into a graph, replayed with one launch; and the
// backend's capture_graph hook over it (Note [backend hooks for static graphs] in core/backend.h).
//
// Note [capturing a graph]
// cudaStreamBeginCapture turns the stream into a recorder: kernels, copies and memsets queued on
// it become nodes of a cudaGraph_t instead of running. Three things make that safe here:
//   - relaxed capture mode: the caching allocator may still call cudaMalloc while a capture runs
//     (it is not stream work, so it is not recorded; the memory simply exists from then on);
//   - the graph pool (Note [graph pool]): every buffer allocated during the capture stays
//     reserved for the graph, so a replay never writes into memory someone else now owns;
//   - waiting for the device before the pool is dropped, since replays may still be running.
// Work that must talk to the host in the middle (a synchronising copy, a cuDNN algorithm search,
// creating a cuBLAS handle) cannot be captured: run the work once before capturing (a warm-up),
// which is what jit::Executor does.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/memory/graph_pool.h"
#include "cuda/allocator.h"
#include "cuda/api.h"
#include "cuda/hooks.h"
#include "cuda/index_checks.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

// The index checks each running capture took over, by the stream it captures.
std::mutex g_captures_mutex;
std::unordered_map<cudaStream_t, std::vector<DeferredIndexCheck>*> g_captures;

void register_capture(cudaStream_t stream, std::vector<DeferredIndexCheck>* checks) {
  std::lock_guard<std::mutex> lock(g_captures_mutex);
  if (checks != nullptr) {
    g_captures[stream] = checks;
  } else {
    g_captures.erase(stream);
  }
}

}  // namespace

bool defer_index_check(cudaStream_t stream, DeferredIndexCheck check) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  if (status != cudaStreamCaptureStatusActive) return false;
  std::lock_guard<std::mutex> lock(g_captures_mutex);
  auto it = g_captures.find(stream);
  if (it == g_captures.end()) return false;  // not our capture: the read-back will fail it
  it->second->push_back(std::move(check));
  return true;
}

struct CUDAGraph::Impl {
  int device = -1;
  cudaStream_t stream = nullptr;  // the stream captured from
  bool capturing = false;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<memory::GraphPool> pool;
  std::vector<DeferredIndexCheck> index_checks;  // Note [index checks in a captured graph]

  // Ends a capture that failed, discarding what was recorded; clears CUDA's error so the stream
  // can be used (and captured) again.
  void abandon_capture() {
    if (!capturing) return;
    cudaGraph_t partial = nullptr;
    (void)cudaStreamEndCapture(stream, &partial);
    if (partial != nullptr) (void)cudaGraphDestroy(partial);
    (void)cudaGetLastError();
    capturing = false;
    register_capture(stream, nullptr);
    if (pool) device_allocator(device).end_graph_pool(*pool);
  }

  void release() {
    abandon_capture();
    if (exec != nullptr || pool) {
      DeviceGuard guard(device);
      (void)cudaDeviceSynchronize();  // replays may be running on any stream
    }
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    index_checks.clear();
    pool.reset();
  }
};

CUDAGraph::CUDAGraph() : impl_(std::make_unique<Impl>()) {}

CUDAGraph::~CUDAGraph() { impl_->release(); }

void CUDAGraph::capture_begin() {
  Impl& g = *impl_;
  check_state(!g.capturing && g.exec == nullptr, "CUDAGraph.capture_begin",
              "this graph is captured already; reset() it first");
  const int device = current_device();
  cudaStream_t stream = current_raw_stream(device);
  check_state(stream != nullptr, "CUDAGraph.capture_begin",
              "the current stream is the default stream, which cannot be captured; capture under "
              "a StreamGuard of a stream from Stream::create()");
  g.device = device;
  g.stream = stream;
  g.pool = device_allocator(device).begin_graph_pool();
  register_capture(stream, &g.index_checks);
  cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    register_capture(stream, nullptr);
    device_allocator(device).end_graph_pool(*g.pool);
    g.pool.reset();
    check_state(false, "CUDAGraph.capture_begin",
                "cudaStreamBeginCapture failed: ", cudaGetErrorString(e));
  }
  g.capturing = true;
}

void CUDAGraph::capture_end() {
  Impl& g = *impl_;
  check_state(g.capturing, "CUDAGraph.capture_end", "no capture is running");
  DeviceGuard guard(g.device);
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(g.stream, &graph);
  g.capturing = false;
  register_capture(g.stream, nullptr);
  device_allocator(g.device).end_graph_pool(*g.pool);
  if (e == cudaSuccess && graph != nullptr) {
    g.graph = graph;
    e = cudaGraphInstantiate(&g.exec, graph, 0);
  }
  if (e != cudaSuccess || g.exec == nullptr) {
    (void)cudaGetLastError();
    if (graph != nullptr && g.graph == nullptr) (void)cudaGraphDestroy(graph);
    g.exec = nullptr;
    g.release();
    check_state(false, "CUDAGraph.capture_end", "the capture failed: ", cudaGetErrorString(e),
                " (an op synchronised with the host, or queued work on a stream it did not join "
                "back to the captured one)");
  }
}

void CUDAGraph::replay() {
  Impl& g = *impl_;
  check_state(g.exec != nullptr, "CUDAGraph.replay", "nothing has been captured");
  DeviceGuard guard(g.device);
  cudaStream_t stream = current_raw_stream(g.device);
  WICK_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  if (g.index_checks.empty()) return;
  // Note [index checks in a captured graph]: one read-back and one wait for all of them.
  std::vector<IndexErrorRecord> host(g.index_checks.size());
  for (size_t k = 0; k < host.size(); ++k) {
    WICK_CUDA_CHECK(cudaMemcpyAsync(&host[k], g.index_checks[k].record->data(),
                                    sizeof(IndexErrorRecord), cudaMemcpyDeviceToHost, stream));
  }
  WICK_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (size_t k = 0; k < host.size(); ++k) {
    const DeferredIndexCheck& c = g.index_checks[k];
    check_index(host[k].flag == 0, c.op.c_str(), "index ", host[k].value,
                " is out of bounds for dimension ", c.dim, " with size ", c.size,
                " (found after a CUDA Graph replay)");
  }
}

void CUDAGraph::reset() { impl_->release(); }

bool CUDAGraph::captured() const { return impl_->exec != nullptr; }

int64_t CUDAGraph::num_nodes() const {
  if (impl_->graph == nullptr) return 0;
  size_t n = 0;
  WICK_CUDA_CHECK(cudaGraphGetNodes(impl_->graph, nullptr, &n));
  return static_cast<int64_t>(n);
}

int64_t CUDAGraph::pool_bytes() const { return impl_->pool ? impl_->pool->bytes() : 0; }

namespace {

// The backend's capture_graph hook (core/backend.h): a CUDAGraph captured on a side stream.
class CapturedCUDAGraph final : public CapturedGraph {
 public:
  CapturedCUDAGraph(int device, const std::function<void()>& work) : device_(device) {
    // One side stream per thread and device: the default stream cannot be captured, and two
    // captures at once on two threads must not share one.
    thread_local std::map<int, Stream> side_streams;
    auto it = side_streams.find(device);
    if (it == side_streams.end()) it = side_streams.emplace(device, Stream::create(device)).first;
    DeviceGuard on_device(device);
    StreamGuard on_side(it->second);
    graph_.capture_begin();
    try {
      work();
    } catch (...) {
      graph_.reset();  // ends the capture
      throw;
    }
    graph_.capture_end();
  }

  void launch() override {
    DeviceGuard on_device(device_);
    graph_.replay();
  }
  int64_t num_nodes() const override { return graph_.num_nodes(); }
  int64_t pool_bytes() const override { return graph_.pool_bytes(); }

 private:
  int device_;
  CUDAGraph graph_;
};

}  // namespace

std::unique_ptr<CapturedGraph> capture_graph(int device, const std::function<void()>& work) {
  return std::make_unique<CapturedCUDAGraph>(device, work);
}

}  // namespace wick::cuda
