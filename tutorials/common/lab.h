// The graded-test harness of the C++ labs: a few macros and a main() that runs every test,
// says which gaps are still missing, prints the lab's figures and ends with "N passed, M failed".
//
//   LAB_TEST(rounds_to_512, "round_size: every request rounds up to a multiple of 512 bytes") {
//     LAB_CHECK_EQ(round_size(1), 512u);
//   }
//   lab::figure("peak reserved (MiB)", 123.4);
//
// A starter's gap throws lab::NotImplemented(hint) (tutorials/make_starter.py writes it); a test
// that reaches one is listed as MISSING with the hint.
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lab {

struct NotImplemented : std::logic_error {
  using std::logic_error::logic_error;
};
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TestCase {
  const char* name;
  const char* what;
  void (*fn)();
};
inline std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}
struct Registrar {
  Registrar(const char* name, const char* what, void (*fn)()) {
    registry().push_back({name, what, fn});
  }
};

inline std::vector<std::string>& figures() {
  static std::vector<std::string> lines;
  return lines;
}
// A number the lab reports (printed after the results, and by grade.sh).
template <class T>
void figure(const std::string& name, const T& value) {
  std::ostringstream s;
  s << name << ": " << value;
  figures().push_back(s.str());
}

template <class A, class B>
void check_eq(const A& a, const B& b, const char* ea, const char* eb, const char* file, int line) {
  if (a == b) return;
  std::ostringstream s;
  s << file << ":" << line << ": expected " << ea << " == " << eb << ", got " << a << " vs " << b;
  throw Failure(s.str());
}

// Runs the tests whose name contains argv[1] (all without one). Returns the number failed.
inline int run_all(int argc, char** argv) {
  std::string filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0;
  std::vector<std::string> missing;
  for (const TestCase& t : registry()) {
    if (!filter.empty() && std::string(t.name).find(filter) == std::string::npos) continue;
    try {
      t.fn();
      ++passed;
      std::printf("PASS     %-34s %s\n", t.name, t.what);
    } catch (const NotImplemented& e) {
      ++failed;
      std::printf("MISSING  %-34s %s\n         -> not written yet: %s\n", t.name, t.what, e.what());
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL     %-34s %s\n         -> %s\n", t.name, t.what, e.what());
    }
    std::fflush(stdout);
  }
  if (!figures().empty()) {
    std::printf("\nfigures:\n");
    for (const std::string& f : figures()) std::printf("  %s\n", f.c_str());
  }
  std::printf("\n%d passed, %d failed\n", passed, failed);
  return failed;
}

}  // namespace lab

#define LAB_TEST(name, what)                                       \
  static void name();                                              \
  static const lab::Registrar name##_registrar(#name, what, name); \
  static void name()

#define LAB_CHECK(cond)                                                           \
  do {                                                                            \
    if (!(cond))                                                                  \
      throw lab::Failure(std::string(__FILE__) + ":" + std::to_string(__LINE__) + \
                         ": expected " #cond);                                    \
  } while (0)

#define LAB_CHECK_EQ(a, b) lab::check_eq((a), (b), #a, #b, __FILE__, __LINE__)

#define LAB_MAIN() \
  int main(int argc, char** argv) { return lab::run_all(argc, argv) == 0 ? 0 : 1; }
