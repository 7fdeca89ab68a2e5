#include "core/host_read.h"

namespace wick {

namespace {
thread_local HostReadObserver* t_observer = nullptr;
}

HostReadObserverGuard::HostReadObserverGuard(HostReadObserver* observer) : previous_(t_observer) {
  t_observer = observer;
}

HostReadObserverGuard::~HostReadObserverGuard() { t_observer = previous_; }

bool host_reads_observed() { return t_observer != nullptr; }

void note_host_read(const std::string& what, const std::string& where) {
  if (t_observer != nullptr) t_observer->on_host_read(what, where);
}

}  // namespace wick
