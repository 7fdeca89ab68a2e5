// Errors. Every user error in wick is an exception whose message starts with the op's name in
// brackets and says what was wrong and what was passed:
//
//   [matmul] inner dimensions differ: (2, 3) @ (4, 5)
//
// The exception type says what kind of mistake it was (Python sees the matching exception):
//   std::invalid_argument  bad value or shape               -> ValueError
//   std::out_of_range      bad index or dimension           -> IndexError
//   wick::TypeError        unsupported or mismatched dtype  -> TypeError
//   wick::OutOfMemoryError an allocator could not serve     -> wick.OutOfMemoryError (RuntimeError)
//   std::runtime_error     misuse of state (backward twice) -> RuntimeError
//
// The check_* helpers take the message in pieces and only format it when the check fails, so a
// passing check costs one branch.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace wick {

class TypeError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

class OutOfMemoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "[op] part1part2..." with each part written by its operator<<.
template <class... Parts>
std::string error_message(const char* op, const Parts&... parts) {
  std::ostringstream os;
  os << '[' << op << "] ";
  (os << ... << parts);
  return os.str();
}

template <class... Parts>
[[noreturn]] void throw_value_error(const char* op, const Parts&... parts) {
  throw std::invalid_argument(error_message(op, parts...));
}

template <class... Parts>
void check_value(bool ok, const char* op, const Parts&... parts) {
  if (!ok) [[unlikely]]
    throw std::invalid_argument(error_message(op, parts...));
}

template <class... Parts>
void check_index(bool ok, const char* op, const Parts&... parts) {
  if (!ok) [[unlikely]]
    throw std::out_of_range(error_message(op, parts...));
}

template <class... Parts>
void check_type(bool ok, const char* op, const Parts&... parts) {
  if (!ok) [[unlikely]]
    throw TypeError(error_message(op, parts...));
}

template <class... Parts>
void check_state(bool ok, const char* op, const Parts&... parts) {
  if (!ok) [[unlikely]]
    throw std::runtime_error(error_message(op, parts...));
}

}  // namespace wick
