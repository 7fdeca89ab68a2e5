// Reads of a tensor's values to the host as plain numbers (item(), bool(t), tolist(), numpy()),
// and the hook through which a tracer hears of them.
//
// Note [host reads]
// A value read to the host leaves the op table: what the program then does with it (a branch, a
// loop bound, a number fed back into an op) is invisible to a tracer that watches the dispatcher,
// which would replay this run's choice forever. So each read says so here, and a tracer installs
// an observer for the length of its trace: a trace that read a value is known not to be
// replayable (Note [graph breaks] in jit/compile.cpp). Outside a trace the cost is one
// thread-local load.
//
// Who reports: the Python conversions (python/host_read.h), where a program's data-dependent
// control flow lives, and each place in the library whose read steers what it computes (an
// output's size from the data, as nonzero and unique have; an optimizer's step count used on
// the host; GradScaler's inf check). Tensor::item() itself does not: kernels read their scalar
// arguments with it while they run (a replay runs them too), and front functions read values to
// check them (an index in range), which is not a choice of the program.
#pragma once

#include <string>

namespace wick {

class HostReadObserver {
 public:
  virtual ~HostReadObserver() = default;
  // `what` is the conversion ("item()", "bool(t)"); `where` the caller's source location when
  // the binding knows it (a Python file and line), else empty.
  virtual void on_host_read(const std::string& what, const std::string& where) = 0;
};

// Installs `observer` on this thread for the guard's lifetime (nesting restores the outer one).
class HostReadObserverGuard {
 public:
  explicit HostReadObserverGuard(HostReadObserver* observer);
  ~HostReadObserverGuard();
  HostReadObserverGuard(const HostReadObserverGuard&) = delete;
  HostReadObserverGuard& operator=(const HostReadObserverGuard&) = delete;

 private:
  HostReadObserver* previous_;
};

bool host_reads_observed();  // whether an observer listens on this thread
void note_host_read(const std::string& what, const std::string& where = {});

}  // namespace wick
