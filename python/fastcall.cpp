// gpupeer._fastcall: the one call an eager collective makes, from Python to the C API, without
// ctypes' per-argument conversion objects (on Debian 12's CPython 3.11, 0.7 us of ctypes against
// about 0.1 us here). Built against CPython's stable ABI (3.10 and later), so one build serves
// every such Python, like the rest of the package; where it is missing the package falls back
// to ctypes. It does not release the GIL: the C API only enqueues work on a stream.
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <cstddef>

namespace {

// The signature shared by gpupeer_rank_comm_run and gpupeer_comm_run (c_api.h).
using RunFunction = int (*)(void*, int, const void*, void*, std::size_t, int, int, int, void*, void*);

void* asPointer(PyObject* value) { return value == Py_None ? nullptr : PyLong_AsVoidPtr(value); }

int asInt(PyObject* value) { return static_cast<int>(PyLong_AsLong(value)); }

/// run10(function_address, comm, op, send, recv, count, type, redop, root, stream, error) -> int
PyObject* run10(PyObject*, PyObject* const* args, Py_ssize_t count) {
  if (count != 11) {
    PyErr_SetString(PyExc_TypeError, "run10 takes 11 arguments");
    return nullptr;
  }
  auto function = reinterpret_cast<RunFunction>(asPointer(args[0]));
  void* comm = asPointer(args[1]);
  int op = asInt(args[2]);
  void* send = asPointer(args[3]);
  void* recv = asPointer(args[4]);
  std::size_t elements = PyLong_AsSize_t(args[5]);
  int type = asInt(args[6]), redop = asInt(args[7]), root = asInt(args[8]);
  void* stream = asPointer(args[9]);
  void* error = asPointer(args[10]);
  if (PyErr_Occurred()) return nullptr;
  if (!function) {
    PyErr_SetString(PyExc_ValueError, "run10: no function");
    return nullptr;
  }
  return PyLong_FromLong(function(comm, op, send, recv, elements, type, redop, root, stream, error));
}

PyMethodDef methods[] = {
    {"run10", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(run10)), METH_FASTCALL,
     "Calls a C API run function at the given address with the ten arguments after it."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastcall", "gpupeer's eager call path", -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__fastcall(void) { return PyModule_Create(&module); }
