// One-line TypeErrors for wrong argument types (Note [one-line TypeErrors] in bind_common.h).
#include <Python.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/memory/history.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

// pybind11's dispatcher: one static function behind every function and method of the module,
// read from a function bound here. Null until install_one_line_type_errors ran.
// (METH_VARARGS | METH_KEYWORDS functions are stored as PyCFunction and called with three
// arguments: CPython casts by the flags, as pybind11 does when it stores the pointer.)
using Dispatcher = PyObject* (*)(PyObject*, PyObject*, PyObject*);
Dispatcher pybind11_dispatcher = nullptr;

Dispatcher dispatcher_of(PyObject* fn) {
  return reinterpret_cast<Dispatcher>(
      reinterpret_cast<void (*)()>(reinterpret_cast<PyCFunctionObject*>(fn)->m_ml->ml_meth));
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Type names as a user writes them: Tensor rather than wick._C.Tensor, None for NoneType.
std::string readable(std::string text) {
  replace_all(text, "wick._C._", "\x01");  // private submodules keep their full name
  replace_all(text, "wick._C.", "");
  replace_all(text, "\x01", "wick._C._");
  replace_all(text, ": handle", ": object");
  replace_all(text, "NoneType", "None");
  return text;
}

std::string type_name(PyObject* value) { return readable(Py_TYPE(value)->tp_name); }

// Display names of property accessors, whose records have no name: "Tensor.requires_grad".
std::unordered_map<const py::detail::function_record*, std::string> accessor_names;

// "wick.zeros", "Tensor.add", "wick._C._data.DataLoader" (a constructor is named by its class).
std::string qualified_name(const py::detail::function_record& rec) {
  if (auto it = accessor_names.find(&rec); it != accessor_names.end()) return it->second;
  std::string scope;
  if (rec.scope && PyType_Check(rec.scope.ptr())) {
    scope = readable(reinterpret_cast<PyTypeObject*>(rec.scope.ptr())->tp_name);
  } else if (rec.scope && PyModule_Check(rec.scope.ptr())) {
    const char* module = PyModule_GetName(rec.scope.ptr());
    scope = module == nullptr ? "wick" : readable(std::string(module) + ".");
    if (!scope.empty() && scope.back() == '.') scope.pop_back();
    if (scope.empty()) scope = "wick";
  }
  if (rec.is_constructor && !scope.empty()) return scope;
  return scope.empty() ? std::string(rec.name) : scope + "." + rec.name;
}

// The types of what was passed, self left out: "(Tensor, str, dim=float)".
std::string passed_types(const py::detail::function_record& rec, PyObject* args, PyObject* kwargs) {
  std::string out = "(";
  Py_ssize_t first = rec.is_method ? 1 : 0;
  for (Py_ssize_t i = first; i < PyTuple_GET_SIZE(args); ++i) {
    if (i > first) out += ", ";
    out += type_name(PyTuple_GET_ITEM(args, i));
  }
  if (kwargs != nullptr) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    bool some = PyTuple_GET_SIZE(args) > first;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      const char* k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : nullptr;
      out += std::string(some ? ", " : "") + (k != nullptr ? k : "?") + "=" + type_name(value);
      some = true;
    }
  }
  return out + ")";
}

// The first overload's parameters without self: "(other: Tensor, alpha: float = 1) -> Tensor".
std::string expected_signature(const py::detail::function_record& rec) {
  std::string sig = readable(rec.signature != nullptr ? rec.signature : "(...)");
  if (rec.is_method && sig.rfind("(", 0) == 0) {  // self (arg0 in a property setter)
    size_t comma = sig.find(", "), close = sig.find(')');
    sig = comma < close ? "(" + sig.substr(comma + 2) : "()" + sig.substr(close + 1);
  }
  if (rec.is_constructor) replace_all(sig, " -> None", "");
  return sig;
}

// Called when the dispatcher failed: turns pybind11's overload dump (a TypeError over many
// lines) into one line. Every other error passes through untouched.
void rewrite_overload_error(PyObject* self, PyObject* args, PyObject* kwargs) {
  bool type_error = PyErr_ExceptionMatches(PyExc_TypeError);
  if (!type_error && !PyErr_ExceptionMatches(PyExc_RuntimeError)) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  std::string text;
  if (PyObject* str = value != nullptr ? PyObject_Str(value) : nullptr) {
    const char* utf8 = PyUnicode_AsUTF8(str);
    if (utf8 != nullptr) text = utf8;
    Py_DECREF(str);
  }
  PyErr_Clear();  // from PyObject_Str or PyUnicode_AsUTF8, if they failed
  auto* rec = static_cast<py::detail::function_record*>(
      PyCapsule_GetPointer(self, py::detail::get_function_record_capsule_name()));
  // pybind11's overload dump, or its cast_error (a RuntimeError) from a py::object argument
  // cast inside a binding: both mean an argument of the wrong type.
  bool dump = type_error && text.find(" arguments. The following argument types are supported:") !=
                                std::string::npos;
  bool cast = !type_error && text.rfind("Unable to cast Python instance", 0) == 0;
  if (rec == nullptr || !(dump || cast)) {
    PyErr_Clear();
    PyErr_Restore(type, value, traceback);
    return;
  }
  int overloads = 0;
  for (const py::detail::function_record* r = rec; r != nullptr; r = r->next) ++overloads;
  std::string name = qualified_name(*rec);
  bool accessor = accessor_names.count(rec) > 0;  // "Tensor.requires_grad = 'x'"
  std::string message = name + (accessor ? " (property)" : "()") + ": got " +
                        passed_types(*rec, args, kwargs) + "; expected " + (accessor ? "" : name) +
                        expected_signature(*rec);
  if (overloads > 1) {
    message += " or one of " + std::to_string(overloads - 1) + " other signature" +
               (overloads > 2 ? "s" : "") + " (see help(" + name + "))";
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
  PyErr_SetString(PyExc_TypeError, message.c_str());
}

// The function's name as the owner of what it allocates (Note [memory history] in
// core/memory/history.h): every call from Python passes here, so "Tensor.add", "conv2d" name
// the op for free. Names are kept for the scope's lifetime (the GIL guards the cache).
const char* owner_name(PyObject* self) {
  static std::unordered_map<const void*, std::string> names;
  auto it = names.find(self);
  if (it == names.end()) {
    auto* rec = static_cast<py::detail::function_record*>(
        PyCapsule_GetPointer(self, py::detail::get_function_record_capsule_name()));
    PyErr_Clear();
    std::string name;
    if (rec != nullptr) {  // "conv2d", "Tensor.add": short, as a profiler names ops
      name = rec->name;
      if (rec->scope && PyType_Check(rec->scope.ptr())) {
        std::string type = reinterpret_cast<PyTypeObject*>(rec->scope.ptr())->tp_name;
        name = type.substr(type.rfind('.') + 1) + "." + name;
      }
    }
    it = names.emplace(self, std::move(name)).first;
  }
  return it->second.c_str();
}

PyObject* one_line_dispatcher(PyObject* self, PyObject* args, PyObject* kwargs) {
  if (memory::history_active()) [[unlikely]] {
    memory::OwnerScope owner(owner_name(self));
    PyObject* result = pybind11_dispatcher(self, args, kwargs);
    if (result == nullptr) rewrite_overload_error(self, args, kwargs);
    return result;
  }
  PyObject* result = pybind11_dispatcher(self, args, kwargs);
  if (result == nullptr) [[unlikely]]
    rewrite_overload_error(self, args, kwargs);
  return result;
}

// Points one pybind11 function object at one_line_dispatcher (its overloads share the object).
// `display` names a property accessor.
void patch_function(PyObject* fn, const std::string& display = "") {
  if (fn == nullptr || !PyCFunction_Check(fn)) return;
  if (!display.empty() && dispatcher_of(fn) == pybind11_dispatcher) {
    auto* rec = static_cast<py::detail::function_record*>(PyCapsule_GetPointer(
        PyCFunction_GET_SELF(fn), py::detail::get_function_record_capsule_name()));
    PyErr_Clear();
    if (rec != nullptr) accessor_names[rec] = display;
  }
  if (dispatcher_of(fn) != pybind11_dispatcher) return;  // not ours, or patched already
  reinterpret_cast<PyCFunctionObject*>(fn)->m_ml->ml_meth =
      reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(one_line_dispatcher));
}

// What a class or module attribute holds that may wrap a pybind11 function: the function
// itself, an instance method, a static method or a property's accessors.
void patch_attribute(PyObject* value, const std::string& display) {
  if (PyCFunction_Check(value)) {
    patch_function(value, display);
  } else if (PyInstanceMethod_Check(value)) {
    patch_function(PyInstanceMethod_GET_FUNCTION(value));
  } else if (PyObject_TypeCheck(value, &PyStaticMethod_Type) ||
             PyObject_TypeCheck(value, &PyProperty_Type)) {
    for (const char* name : {"__func__", "fget", "fset", "fdel"}) {
      if (!PyObject_HasAttrString(value, name)) continue;
      PyObject* inner = PyObject_GetAttrString(value, name);
      bool accessor = PyObject_TypeCheck(value, &PyProperty_Type);
      if (inner != nullptr) patch_attribute(inner, accessor ? display : "");
      Py_XDECREF(inner);
      PyErr_Clear();
    }
  }
}

void patch_namespace(py::handle owner, const std::string& module_name,
                     std::unordered_set<PyObject*>& seen) {
  if (!seen.insert(owner.ptr()).second) return;
  // The real dicts: a class's __dict__ attribute is a read-only proxy, not a dict.
  PyObject* raw = PyType_Check(owner.ptr()) ? reinterpret_cast<PyTypeObject*>(owner.ptr())->tp_dict
                                            : PyModule_GetDict(owner.ptr());
  if (raw == nullptr) return;
  py::dict dict = py::reinterpret_borrow<py::dict>(raw);
  std::string owner_name = PyType_Check(owner.ptr())
                               ? readable(reinterpret_cast<PyTypeObject*>(owner.ptr())->tp_name)
                               : "";
  for (auto item : dict) {
    py::handle value = item.second;
    std::string display;
    if (PyObject_TypeCheck(value.ptr(), &PyProperty_Type) && !owner_name.empty()) {
      display = owner_name + "." + py::str(item.first).cast<std::string>();
    }
    patch_attribute(value.ptr(), display);
    if (PyModule_Check(value.ptr())) {
      const char* name = PyModule_GetName(value.ptr());
      if (name != nullptr && std::string(name).rfind(module_name, 0) == 0) {
        patch_namespace(value, module_name, seen);  // a submodule of ours (_C._data, ...)
      }
      PyErr_Clear();
    } else if (PyType_Check(value.ptr())) {
      // Only classes defined by this module (and nested ones), not builtins it refers to.
      py::object module = py::getattr(value, "__module__", py::none());
      if (py::isinstance<py::str>(module) &&
          module.cast<std::string>().rfind(module_name, 0) == 0) {
        patch_namespace(value, module_name, seen);
      }
    }
  }
}

}  // namespace

void install_one_line_type_errors(py::module_& m) {
  py::cpp_function probe([] {});
  pybind11_dispatcher = dispatcher_of(probe.ptr());
  std::unordered_set<PyObject*> seen;
  patch_namespace(m, PyModule_GetName(m.ptr()), seen);
}

}  // namespace wick::python
