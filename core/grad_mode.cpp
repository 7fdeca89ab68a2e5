#include "core/grad_mode.h"

namespace wick {

namespace {
thread_local bool t_grad_enabled = true;
}

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace wick
