// gpupeer._fastcall: the one call an eager collective makes, from Python to the C API, without
// ctypes' per-argument conversion objects (on Debian 12's CPython 3.11, 0.7 us of ctypes against
// about 0.1 us here). Built against CPython's stable ABI (3.10 and later), so one build serves
// every such Python, like the rest of the package; where it is missing the package falls back
// to ctypes. It does not release the GIL: the C API only enqueues work on a stream.
//
// torch_run reads a torch tensor's pointer, size, type and device and torch's current stream
// here rather than in Python: on the GPU machine's CPython 3.12 those reads cost ~2 us per call
// from Python. It reads them through torch's Python methods, so it works with any torch;
// torchcall.cpp reads at::Tensor itself where it was built against the torch in the process.
// Both take only calls whose every argument is fine and answer None for anything else
// (tensor_call.hpp), so that the Python path, the one place that words the errors, checks it
// again.
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <dlfcn.h>

#include <cstddef>
#include <initializer_list>

#include "tensor_call.hpp"

namespace {

using gpupeer_python::asInt;
using gpupeer_python::asPointer;
using gpupeer_python::RunFunction;
using gpupeer_python::TensorArgs;

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

// PyObject_Vectorcall: exported by CPython 3.11 and later (stable ABI from 3.12) but not
// declared by the 3.10 stable ABI this module is built against; looked up at setup, so that a
// Python without it still imports the module and reads through bound methods instead.
using VectorcallFunction = PyObject* (*)(PyObject*, PyObject* const*, std::size_t, PyObject*);

// What setup_torch handed over: the tensor types taken here (torch.Tensor and nn.Parameter
// exactly: a subclass may override what is read), {torch.dtype: c_api.h type code} and
// torch._C._cuda_getCurrentRawStream; the attribute names and torch.Tensor's method
// descriptors, made once.
struct Torch {
  PyObject* tensorTypes = nullptr;
  PyObject* typeCodes = nullptr;
  PyObject* rawStream = nullptr;
  PyObject* dtype = nullptr;
  // is_contiguous, data_ptr, numel, get_device: names, then torch.Tensor's descriptors.
  PyObject* names[4] = {};
  PyObject* methods[4] = {};
  VectorcallFunction vectorcall = nullptr;
} torch;

enum Method { kIsContiguous, kDataPtr, kNumel, kGetDevice };

/// setup_torch((tensor_type, ...), type_codes, raw_stream) -> None
PyObject* setupTorch(PyObject*, PyObject* const* args, Py_ssize_t count) {
  if (count != 3 || !PyTuple_Check(args[0]) || PyTuple_Size(args[0]) < 1 || !PyDict_Check(args[1]) ||
      !PyCallable_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "setup_torch(tensor_types: tuple, type_codes: dict, raw_stream: callable)");
    return nullptr;
  }
  static const char* const names[] = {"is_contiguous", "data_ptr", "numel", "get_device"};
  if (!torch.dtype && !(torch.dtype = PyUnicode_InternFromString("dtype"))) return nullptr;
  PyObject* methods[4] = {};
  for (int i = 0; i < 4; ++i) {
    if (!torch.names[i] && !(torch.names[i] = PyUnicode_InternFromString(names[i]))) return nullptr;
    methods[i] = PyObject_GetAttr(PyTuple_GetItem(args[0], 0), torch.names[i]);
    if (!methods[i]) {
      for (PyObject* m : methods) Py_XDECREF(m);
      return nullptr;
    }
  }
  for (int i = 0; i < 4; ++i) {
    Py_XDECREF(torch.methods[i]);
    torch.methods[i] = methods[i];
  }
  PyObject* old[] = {torch.tensorTypes, torch.typeCodes, torch.rawStream};
  for (int i = 0; i < 3; ++i) Py_INCREF(args[i]);
  torch.tensorTypes = args[0];
  torch.typeCodes = args[1];
  torch.rawStream = args[2];
  for (PyObject* o : old) Py_XDECREF(o);
  torch.vectorcall = reinterpret_cast<VectorcallFunction>(dlsym(RTLD_DEFAULT, "PyObject_Vectorcall"));
  Py_RETURN_NONE;
}

/// `function(argument)` as a new reference (null: failed).
PyObject* callWith(PyObject* function, PyObject* argument) {
  if (torch.vectorcall) return torch.vectorcall(function, &argument, 1, nullptr);
  return PyObject_CallFunctionObjArgs(function, argument, nullptr);
}

/// x.method() as a new reference (null: failed).
PyObject* callMethod(PyObject* x, Method method) { return callWith(torch.methods[method], x); }

/// Whether `x` is one of the types taken here, exactly.
bool isTakenType(PyObject* x) {
  auto* type = reinterpret_cast<PyObject*>(Py_TYPE(x));
  for (Py_ssize_t i = 0, n = PyTuple_Size(torch.tensorTypes); i < n; ++i)
    if (PyTuple_GetItem(torch.tensorTypes, i) == type) return true;
  return false;
}

/// Whether `x` is a contiguous torch tensor of a supported type, read into *out. Anything else
/// (and any error, which is cleared) is false: the Python path then says what is wrong. Whether
/// it is CUDA memory is not read here (get_device() is -1 on the host, which no communicator
/// drives): the library checks every pointer's attributes before anything is enqueued.
bool readTensor(PyObject* x, TensorArgs* out) {
  if (!torch.tensorTypes || !isTakenType(x)) return false;
  bool ok = false;
  PyObject *dtype = nullptr, *contiguous = nullptr, *ptr = nullptr, *count = nullptr, *device = nullptr;
  do {
    if (!(dtype = PyObject_GetAttr(x, torch.dtype))) break;
    PyObject* code = PyDict_GetItemWithError(torch.typeCodes, dtype);  // borrowed
    if (!code) break;
    out->type = static_cast<int>(PyLong_AsLong(code));
    if (!(contiguous = callMethod(x, kIsContiguous)) || contiguous != Py_True) break;
    if (!(ptr = callMethod(x, kDataPtr)) || !(count = callMethod(x, kNumel)) || !(device = callMethod(x, kGetDevice)))
      break;
    out->ptr = PyLong_AsVoidPtr(ptr);
    out->count = PyLong_AsLongLong(count);
    out->device = static_cast<int>(PyLong_AsLong(device));
    ok = !PyErr_Occurred() && out->count >= 0;
  } while (false);
  for (PyObject* o : {dtype, contiguous, ptr, count, device}) Py_XDECREF(o);
  if (PyErr_Occurred()) PyErr_Clear();
  return ok;
}

/// torch._C._cuda_getCurrentRawStream(device): the handle of torch's current stream there.
bool currentStream(int, PyObject* device, void** handle) {
  PyObject* raw = callWith(torch.rawStream, device);
  if (!raw) return false;
  *handle = PyLong_AsVoidPtr(raw);
  Py_DECREF(raw);
  return !PyErr_Occurred();
}

// torch_run(state, op, tensor, out, redop, root) and torch_run_many(state, op, tensors, outs,
// redop, root): tensor_call.hpp's runOnTensors and runOnTensorLists with this reader.
using Calls = gpupeer_python::TensorCalls<readTensor, currentStream>;

PyMethodDef methods[] = {
    {"run10", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(run10)), METH_FASTCALL,
     "Calls a C API run function at the given address with the ten arguments after it."},
    {"setup_torch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(setupTorch)), METH_FASTCALL,
     "Hands over the tensor types taken, the dtype codes and torch's current-stream function."},
    Calls::oneMethod(),
    Calls::manyMethod(),
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fastcall", "gpupeer's eager call path", -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__fastcall(void) { return PyModule_Create(&module); }
