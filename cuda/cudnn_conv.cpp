// conv2d and conv2d_backward on the GPU through cuDNN's graph (backend) API.
//
// Note [cuDNN graph API]
// cuDNN 9 deprecates the fixed-function convolution calls (cudnnConvolutionForward and friends).
// Its graph API describes the work as descriptors - tensors, a convolution, one operation, an
// operation graph - asks heuristics for ranked engine configurations, finalizes an execution plan
// for one of them, and executes the plan with a "variant pack" of device pointers and a workspace.
// wick uses the C backend API directly, without the header-only C++ frontend, so every step is
// visible here. (The operation graph and plan take the cudnnHandle through their _HANDLE
// attributes, which cuDNN 9.19 marks deprecated in favour of device-property descriptors that
// allow building plans without a device; the handle form works on every cuDNN 9 release.)
//
// Note [convolution algorithm selection]
// By default the first engine configuration of heuristic mode A that finalizes, whose numerics
// are allowed (no TF32 tensor cores for float32 unless set_cudnn_allow_tf32) and whose workspace
// can be allocated, is used. In benchmark mode (set_cudnn_benchmark(true), PyTorch's
// torch.backends.cudnn.benchmark) up to kMaxCandidates plans are run and timed with CUDA events
// and the fastest wins. Either way the plan is cached per (operation, shapes, dtype, convolution
// parameters, alignment, flags), so selection costs once per new shape. Workspaces come from the
// caching allocator (DeviceBuffer).
//
// Groups need no attribute: cuDNN infers them from the input's channels and the filter's
// (C / groups) channel dimension.
#include <cudnn.h>

#include <array>
#include <atomic>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "cuda/allocator.h"
#include "cuda/cudnn_util.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick::cuda {

void check_cudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::ostringstream os;
  os << "[cudnn] " << call << " failed at " << file << ":" << line << ": "
     << cudnnGetErrorString(status) << (detail[0] ? " (" : "") << detail << (detail[0] ? ")" : "");
  throw std::runtime_error(os.str());
}

// One handle per device and thread (a handle carries its stream).
cudnnHandle_t cudnn_handle(int device, cudaStream_t stream) {
  thread_local std::vector<cudnnHandle_t> handles;
  if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
  if (handles[device] == nullptr) {
    std::string problem = cudnn_version_problem();
    check_state(problem.empty(), "cudnn", problem);
    WICK_CUDNN_CHECK(cudnnCreate(&handles[device]));
  }
  WICK_CUDNN_CHECK(cudnnSetStream(handles[device], stream));
  return handles[device];
}

namespace {

std::atomic<bool> g_benchmark{false};
std::atomic<bool> g_allow_tf32{true};
constexpr int kMaxCandidates = 8;

// An owned backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    WICK_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_));
  }
  ~Desc() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(Desc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  Desc& operator=(Desc&&) = delete;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* ptr() { return &d_; }

  template <class T>
  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
            const T* values) {
    WICK_CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
    return *this;
  }
  Desc& set_desc(cudnnBackendAttributeName_t name, const Desc& value) {
    cudnnBackendDescriptor_t v = value.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
  }
  void finalize() { WICK_CUDNN_CHECK(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

enum class ConvOp { Forward, BackwardData, BackwardFilter };

int64_t alignment_of(const void* ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  int64_t a = 16;
  while (a > 1 && address % a != 0) a /= 2;
  return a;
}

cudnnDataType_t data_type(DType dtype) {
  switch (dtype) {
    case kFloat32:
      return CUDNN_DATA_FLOAT;
    case kFloat64:
      return CUDNN_DATA_DOUBLE;
    case kFloat16:
      return CUDNN_DATA_HALF;
    case kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      throw TypeError(error_message("conv2d", "cuDNN has no convolution for ", dtype));
  }
}

// Note [size-1 strides]
// A dimension of size 1 can carry any stride (0 after expand, anything after a slice), and cuDNN
// reads the strides to pick the layout: an odd one makes a contiguous tensor look strided, turns
// engines away or splits the plan cache. As PyTorch does (fixSizeOneDimStride), each size-1
// dimension gets the stride it would have in the tensor's dense layout (NCHW, or NHWC when the
// channels are innermost), in the descriptor and in the plan-cache key alike.
std::array<int64_t, 4> normalized_strides(const Tensor& t) {
  std::array<int64_t, 4> stride;
  for (int d = 0; d < 4; ++d) stride[d] = t.stride(d);
  bool nhwc = t.size(1) > 1 && t.stride(1) == 1 && !t.is_contiguous();
  const int nchw_order[4] = {3, 2, 1, 0}, nhwc_order[4] = {1, 3, 2, 0};
  int64_t z = 1;
  for (int d : nhwc ? nhwc_order : nchw_order) {
    if (t.size(d) == 1) {
      stride[d] = z;
    } else {
      z = t.size(d) * stride[d];
    }
  }
  return stride;
}

Desc tensor_desc(const Tensor& t, int64_t uid) {
  cudnnDataType_t type = data_type(t.dtype());
  int64_t dims[4], strides[4];
  std::array<int64_t, 4> normalized = normalized_strides(t);
  for (int d = 0; d < 4; ++d) dims[d] = t.size(d), strides[d] = normalized[d];
  int64_t alignment = alignment_of(t.data_ptr());
  Desc desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  desc.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  desc.finalize();
  return desc;
}

// The three tensors of an operation, by role: x (input or its gradient), w (filter or its
// gradient), y (output or its gradient).
struct ConvTensors {
  const Tensor* x;
  const Tensor* w;
  const Tensor* y;
};
constexpr int64_t kX = 'x', kW = 'w', kY = 'y';

// The operation graph for one convolution, and every descriptor it refers to: descriptors hold
// references to the ones set on them, so all of them live as long as a plan built from the graph
// (the C++ frontend keeps them alive the same way).
struct Graph {
  std::vector<Desc> parts;  // tensors, convolution, operation
  Desc graph{CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR};
};

std::shared_ptr<Graph> operation_graph(ConvOp op, const ConvTensors& t, const Conv2dParams& p,
                                       cudnnHandle_t h) {
  auto g = std::make_shared<Graph>();
  Desc x = tensor_desc(*t.x, kX), w = tensor_desc(*t.w, kW), y = tensor_desc(*t.y, kY);
  bool is_double = t.x->dtype() == kFloat64;
  cudnnDataType_t compute = is_double ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;  // what every framework calls conv
  int64_t spatial = 2;
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, p.padding)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, p.padding)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, p.dilation)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, p.stride);
  conv.finalize();

  struct Names {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
  };
  static const Names kNames[] = {
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
  };
  const Names& n = kNames[static_cast<int>(op)];
  Desc operation(n.type);
  operation.set_desc(n.x, x).set_desc(n.w, w).set_desc(n.y, y).set_desc(n.conv, conv);
  double alpha_d = 1.0, beta_d = 0.0;
  float alpha_f = 1.0f, beta_f = 0.0f;
  if (is_double) {
    operation.set(n.alpha, CUDNN_TYPE_DOUBLE, 1, &alpha_d)
        .set(n.beta, CUDNN_TYPE_DOUBLE, 1, &beta_d);
  } else {
    operation.set(n.alpha, CUDNN_TYPE_FLOAT, 1, &alpha_f).set(n.beta, CUDNN_TYPE_FLOAT, 1, &beta_f);
  }
  operation.finalize();

  g->graph.set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, operation)
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  g->graph.finalize();
  for (Desc* d : {&x, &w, &y, &conv, &operation}) g->parts.push_back(std::move(*d));
  return g;
}

// Whether `config`'s engine may run: never one that down-converts its inputs
// (CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: float32 data computed in half precision, a silent
// loss of precision PyTorch always rejects), and no tensor cores for float32 data unless TF32 is
// allowed.
bool engine_allowed(const Desc& config, bool forbid_tf32) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  int64_t count = 0;
  WICK_CUDNN_CHECK(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                            engine.ptr()));
  cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
  WICK_CUDNN_CHECK(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                            CUDNN_TYPE_NUMERICAL_NOTE,
                                            CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count, notes));
  for (int64_t i = 0; i < count; ++i) {
    if (notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    if (forbid_tf32 && notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE) return false;
  }
  return true;
}

// Engine configurations from heuristics `mode`, best first.
std::vector<std::shared_ptr<Desc>> engine_configs(const Graph& graph, cudnnBackendHeurMode_t mode) {
  Desc heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heuristics.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph.graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heuristics.finalize();
  int64_t count = 0;
  WICK_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<std::shared_ptr<Desc>> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_shared<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  WICK_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count,
                                            raw.data()));
  configs.resize(static_cast<size_t>(count));
  return configs;
}

struct Plan {
  std::shared_ptr<Graph> graph;  // kept alive with the plan
  std::shared_ptr<Desc> config;
  std::shared_ptr<Desc> plan;
  int64_t workspace = 0;
};

// Finalizes a plan for `config`; an empty plan when this engine cannot run the graph.
Plan make_plan(const std::shared_ptr<Graph>& graph, const std::shared_ptr<Desc>& config,
               cudnnHandle_t h) {
  Plan p;
  auto plan = std::make_shared<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  plan->set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *config)
      .set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS) return p;
  WICK_CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, nullptr, &p.workspace));
  p.graph = graph;
  p.config = config;
  p.plan = std::move(plan);
  return p;
}

// Queues the plan; returns cuDNN's status (a candidate that fails to execute is skipped).
cudnnStatus_t try_execute(const Plan& plan, cudnnHandle_t h, const ConvTensors& t,
                          void* workspace) {
  void* pointers[3] = {t.x->data_ptr(), t.w->data_ptr(), t.y->data_ptr()};
  int64_t uids[3] = {kX, kW, kY};
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers)
      .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  return cudnnBackendExecute(h, plan.plan->get(), pack.get());
}

void execute(const Plan& plan, cudnnHandle_t h, const ConvTensors& t, void* workspace) {
  WICK_CUDNN_CHECK(try_execute(plan, h, t, workspace));
}

std::string cache_key(ConvOp op, const ConvTensors& t, const Conv2dParams& p, int device) {
  std::ostringstream os;
  os << static_cast<int>(op) << '|' << device << '|' << dtype_name(t.x->dtype()) << '|';
  for (const Tensor* x : {t.x, t.w, t.y}) {
    std::array<int64_t, 4> strides = normalized_strides(*x);  // Note [size-1 strides]
    os << x->shape() << strides[0] << ',' << strides[1] << ',' << strides[2] << ',' << strides[3]
       << '@' << alignment_of(x->data_ptr()) << '|';
  }
  os << p.stride[0] << ',' << p.stride[1] << ',' << p.padding[0] << ',' << p.padding[1] << ','
     << p.dilation[0] << ',' << p.dilation[1] << '|' << g_allow_tf32 << g_benchmark;
  return os.str();
}

// Runs one convolution operation, choosing and caching its plan on first sight of the shape.
void run(ConvOp op, const ConvTensors& t, const Conv2dParams& p) {
  LaunchContext ctx(*t.y);
  cudnnHandle_t h = cudnn_handle(ctx.device(), ctx.stream());
  thread_local std::unordered_map<std::string, Plan> cache;
  std::string key = cache_key(op, t, p, ctx.device());
  auto found = cache.find(key);
  if (found != cache.end()) {
    DeviceBuffer workspace(static_cast<size_t>(found->second.workspace));
    execute(found->second, h, t, workspace.data());
    return;
  }

  std::shared_ptr<Graph> graph = operation_graph(op, t, p, h);
  bool forbid_tf32 = t.x->dtype() == kFloat32 && !g_allow_tf32;
  std::vector<Plan> candidates;
  // Note [engine selection fallback]: a heuristics mode that fails, or yields no usable engine,
  // moves on to the next mode; an engine whose plan fails to finalize or to execute moves on to
  // the next candidate. Only when every candidate of every mode failed is it an error.
  std::string heuristics_error;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<std::shared_ptr<Desc>> configs;
    try {
      configs = engine_configs(*graph, mode);
    } catch (const std::runtime_error& e) {
      heuristics_error = e.what();
      continue;
    }
    for (const std::shared_ptr<Desc>& config : configs) {
      if (!engine_allowed(*config, forbid_tf32)) continue;
      Plan plan = make_plan(graph, config, h);
      if (plan.plan) candidates.push_back(std::move(plan));
      // A few spare candidates in heuristic mode, in case the best one's workspace does not fit.
      if (static_cast<int>(candidates.size()) >= (g_benchmark ? kMaxCandidates : 3)) break;
    }
    if (!candidates.empty()) break;
  }
  check_state(!candidates.empty(), "conv2d", "cuDNN found no engine for this convolution (dtype ",
              t.x->dtype(), ", input ", t.x->shape(), ", filter ", t.w->shape(), ")",
              heuristics_error.empty() ? "" : "; heuristics: ", heuristics_error);

  // Heuristics: the first candidate whose workspace fits. Benchmark: the fastest of those that
  // fit, timed over a few runs after a warm-up.
  Plan best;
  float best_ms = 0;
  for (Plan& plan : candidates) {
    std::unique_ptr<DeviceBuffer> workspace;
    try {
      workspace = std::make_unique<DeviceBuffer>(static_cast<size_t>(plan.workspace));
    } catch (const OutOfMemoryError&) {
      continue;  // try an engine that needs less
    }
    if (!g_benchmark) {
      if (try_execute(plan, h, t, workspace->data()) != CUDNN_STATUS_SUCCESS) continue;
      cache.emplace(key, plan);
      return;
    }
    Event start(true), stop(true);
    if (try_execute(plan, h, t, workspace->data()) != CUDNN_STATUS_SUCCESS) continue;  // warm-up
    start.record();
    for (int i = 0; i < 3; ++i) execute(plan, h, t, workspace->data());
    stop.record();
    stop.synchronize();
    float ms = start.elapsed_ms(stop);
    if (!best.plan || ms < best_ms) best = plan, best_ms = ms;
  }
  check_state(best.plan != nullptr, "conv2d",
              "no cuDNN engine could run: each one's workspace did not fit in the free device "
              "memory or its execution failed");
  cache.emplace(key, best);
  DeviceBuffer workspace(static_cast<size_t>(best.workspace));
  execute(best, h, t, workspace.data());  // the result, from the winner
}

void conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Tensor& out,
            const Conv2dParams& p) {
  if (out.numel() == 0) return;
  run(ConvOp::Forward, {&input, &weight, &out}, p);
  if (bias.defined()) {
    // out += bias[None, :, None, None], with the CUDA add kernel (broadcasting, in place).
    Tensor b = bias.view(Shape{1, bias.size(0), 1, 1});
    kernel_registry().find<BinaryKernel>(OpKey::add, kCUDA)(out, b, out);
  }
}

void conv2d_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                     Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias,
                     const Conv2dParams& p) {
  Tensor dy = grad_out.is_contiguous() ? grad_out : grad_out.contiguous();
  if (grad_input.defined() && grad_input.numel() > 0) {
    run(ConvOp::BackwardData, {&grad_input, &weight, &dy}, p);
  }
  if (grad_weight.defined() && grad_weight.numel() > 0) {
    run(ConvOp::BackwardFilter, {&input, &grad_weight, &dy}, p);
  }
  if (grad_bias.defined()) {
    Tensor gb = grad_bias.view(Shape{1, grad_bias.size(0), 1, 1});
    kernel_registry().find<ReduceKernel>(OpKey::sum, kCUDA)(dy, gb, DimVec{0, 2, 3});
  }
}

}  // namespace

// Refuses a cuDNN runtime of another major version than the headers wick was built with (its
// descriptors and enums may differ), and one built for another CUDA major version than wick's
// runtime; PyTorch checks the same at start-up. An older minor version is accepted: wick calls
// only what cuDNN 9.0 has, and the GPU machine's cuDNN (PyTorch's wheel) may be older than the
// headers it was compiled with (Note [finding cuDNN] in cuda/CMakeLists.txt).
std::string cudnn_version_problem() {
  static const std::string problem = [] {
    size_t runtime = cudnnGetVersion();
    size_t major = runtime / 10000, minor = (runtime % 10000) / 100;
    std::ostringstream os;
    if (major != CUDNN_MAJOR) {
      os << "wick was built against cuDNN " << CUDNN_MAJOR << "." << CUDNN_MINOR << "."
         << CUDNN_PATCHLEVEL << " but found cuDNN " << major << "." << minor << "." << runtime % 100
         << " at run time; install cuDNN " << CUDNN_MAJOR << "." << CUDNN_MINOR
         << " or newer of the same major version, or rebuild wick against the installed one";
    } else if (cudnnGetCudartVersion() / 1000 != CUDART_VERSION / 1000) {
      os << "the cuDNN library was built for CUDA " << cudnnGetCudartVersion() / 1000
         << " but wick uses CUDA " << CUDART_VERSION / 1000
         << "; install the cuDNN build for this CUDA version";
    }
    return os.str();
  }();
  return problem;
}

void set_cudnn_benchmark(bool benchmark) { g_benchmark = benchmark; }
bool cudnn_benchmark() { return g_benchmark; }
void set_cudnn_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool cudnn_allow_tf32() { return g_allow_tf32; }

void register_conv_kernels(KernelRegistry& r) {
  r.add<Conv2dKernel>(OpKey::conv2d, kCUDA, conv2d);
  r.add<Conv2dBackwardKernel>(OpKey::conv2d_backward, kCUDA, conv2d_backward);
}

}  // namespace wick::cuda
