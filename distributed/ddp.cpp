// DistributedDataParallel's construction (shape check, broadcast from rank 0) and forward.
#include "distributed/ddp.h"

#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "core/error.h"
#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick::distributed {

namespace {
const char* kOp = "DistributedDataParallel";
}

void verify_same_shapes(ProcessGroup& group, const std::vector<Tensor>& tensors,
                        const std::string& what) {
  // Each rank sends three numbers - how many tensors, how many elements, and a hash of every
  // shape and dtype - and every rank compares all of them, so all ranks throw together.
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  auto mix = [&hash](uint64_t v) {
    for (int byte = 0; byte < 8; ++byte)
      hash = (hash ^ ((v >> (8 * byte)) & 0xff)) * 1099511628211ull;
  };
  int64_t elements = 0;
  for (const Tensor& t : tensors) {
    mix(static_cast<uint64_t>(t.dtype()));
    mix(static_cast<uint64_t>(t.dim()));
    for (int64_t d = 0; d < t.dim(); ++d) mix(static_cast<uint64_t>(t.size(d)));
    elements += t.numel();
  }
  Tensor mine = tensor(std::vector<int64_t>{static_cast<int64_t>(tensors.size()), elements,
                                            static_cast<int64_t>(hash >> 1)},
                       TensorOptions(kInt64))
                    .to(group.device());
  Tensor all = zeros({3 * group.size()}, TensorOptions(kInt64).with_device(group.device()));
  group.all_gather(all, mine)->wait();
  std::vector<int64_t> v = all.cpu().to_vector<int64_t>();
  for (int r = 1; r < group.size(); ++r) {
    bool same = v[3 * r] == v[0] && v[3 * r + 1] == v[1] && v[3 * r + 2] == v[2];
    check_value(same, kOp, "every rank must hold the same ", what, ", but rank ", r, " has ",
                v[3 * r], " tensors with ", v[3 * r + 1], " elements and rank 0 has ", v[0],
                " with ", v[1],
                v[3 * r] == v[0] && v[3 * r + 1] == v[1] ? " (shapes or dtypes differ)" : "",
                "; build the same model on every rank");
  }
}

void broadcast_coalesced(ProcessGroup& group, const std::vector<Tensor>& tensors, int root,
                         size_t buffer_bytes) {
  NoGradGuard no_grad;
  // Group by (dtype, device), keeping order, then cut each group into buffers.
  using Key = std::tuple<DType, DeviceType, int>;
  std::map<Key, std::vector<Tensor>> groups;
  for (const Tensor& t : tensors) {
    groups[Key(t.dtype(), t.device().type, t.device().index)].push_back(t);
  }
  struct Chunk {
    std::vector<Tensor> members;
    Tensor flat;
    std::shared_ptr<Work> work;
  };
  std::vector<Chunk> chunks;
  for (auto& [key, members] : groups) {
    Chunk chunk;
    size_t bytes = 0;
    for (const Tensor& t : members) {
      if (!chunk.members.empty() && bytes + t.nbytes() > buffer_bytes) {
        chunks.push_back(std::move(chunk));
        chunk = Chunk();
        bytes = 0;
      }
      chunk.members.push_back(t);
      bytes += t.nbytes();
    }
    if (!chunk.members.empty()) chunks.push_back(std::move(chunk));
  }
  for (Chunk& chunk : chunks) {  // pack and launch every buffer, then wait for them all
    int64_t total = 0;
    for (const Tensor& t : chunk.members) total += t.numel();
    const Tensor& first = chunk.members.front();
    chunk.flat = empty({total}, TensorOptions(first.dtype()).with_device(first.device()));
    int64_t offset = 0;
    for (const Tensor& t : chunk.members) {
      chunk.flat.narrow(0, offset, t.numel()).copy_(t.reshape({t.numel()}));
      offset += t.numel();
    }
    chunk.work = group.broadcast(chunk.flat, root);
  }
  for (Chunk& chunk : chunks) {
    chunk.work->wait();
    if (group.rank() == root) continue;
    int64_t offset = 0;
    for (const Tensor& t : chunk.members) {
      Tensor target = t;
      target.copy_(chunk.flat.narrow(0, offset, t.numel()).view(t.shape()));
      offset += t.numel();
    }
  }
}

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 std::shared_ptr<ProcessGroup> group,
                                                 DDPOptions options)
    : nn::Module("DistributedDataParallel"),
      module_(std::move(module)),
      group_(group ? std::move(group) : default_group_ptr()),
      options_(options) {
  check_value(module_ != nullptr, kOp, "got no module to wrap");
  register_module("module", module_);

  // PyTorch's parameter list: the module's parameters that require grad, each shared one once.
  std::vector<Tensor> params;
  std::vector<std::string> names;
  std::unordered_set<const TensorImpl*> seen;
  for (auto& [name, p] : module_->named_parameters()) {
    if (!p.requires_grad() || !seen.insert(p.impl()).second) continue;
    params.push_back(p);
    names.push_back(name);
  }
  std::vector<Tensor> state = params;
  for (auto& [name, b] : module_->named_buffers()) {
    buffers_.push_back(b);
    state.push_back(b);
  }

  // Note [construction broadcast]
  // Replicas must start equal: each rank may have initialised its model from a different seed
  // (or loaded a different checkpoint). DDP first checks that the ranks hold the same shapes -
  // a mismatch would make the broadcast pair unrelated tensors - and then copies rank 0's
  // parameters and buffers to every rank, so "authoritative rank 0" decides the start.
  verify_same_shapes(*group_, state, "parameters and buffers");
  broadcast_coalesced(*group_, state, 0);

  ReducerOptions reducer_options;
  reducer_options.bucket_cap_mb = options_.bucket_cap_mb;
  reducer_options.first_bucket_cap_mb = options_.first_bucket_cap_mb;
  reducer_options.find_unused_parameters = options_.find_unused_parameters;
  reducer_options.single_bucket = options_.single_bucket;
  reducer_ = Reducer::create(params, names, group_, reducer_options);
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  // Buffers (e.g. batch-norm statistics) drift apart when each rank updates them from its own
  // data; PyTorch re-broadcasts rank 0's before every synchronised forward.
  if (options_.broadcast_buffers && require_backward_grad_sync_ && !buffers_.empty()) {
    broadcast_coalesced(*group_, buffers_, 0);
  }
  Tensor output = (*module_)(input);
  if (GradMode::is_enabled()) {
    reducer_->prepare_for_backward({output}, require_backward_grad_sync_);
  }
  return output;
}

std::string DistributedDataParallel::extra_repr() const {
  std::ostringstream os;
  os << "backend=" << group_->backend() << ", world_size=" << group_->size()
     << ", bucket_cap_mb=" << options_.bucket_cap_mb
     << ", find_unused_parameters=" << (options_.find_unused_parameters ? "true" : "false");
  return os.str();
}

}  // namespace wick::distributed
