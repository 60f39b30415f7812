#pragma once
// One eager collective on tensors, from Python's arguments to the C API call, shared by the two
// readers of torch tensors: fastcall.cpp reads them through torch's Python methods (any torch,
// stable ABI), torchcall.cpp through at::Tensor (built against the torch it runs with). Each
// hands over how a tensor is read and how the current stream is found; this checks the counts,
// the types and the devices, and declines (None) every call the Python path must word.
// CPython's limited API only, so that the stable-ABI module can include it.

#include <Python.h>

#include <cstddef>

#include "gpupeer/c_api.h"

namespace gpupeer_python {

// The signature shared by gpupeer_rank_comm_run and gpupeer_comm_run (c_api.h).
using RunFunction = int (*)(void*, int, const void*, void*, std::size_t, int, int, int, void*, void*);

inline void* asPointer(PyObject* value) { return value == Py_None ? nullptr : PyLong_AsVoidPtr(value); }

inline int asInt(PyObject* value) { return static_cast<int>(PyLong_AsLong(value)); }

/// A tensor as the C API takes it.
struct TensorArgs {
  void* ptr = nullptr;
  long long count = 0;
  int type = -1;
  int device = -1;
};

// gpupeer_collective_elements, whose address the state of each call carries: the library's rule
// for how many elements each operation reads and writes.
using ElementsFunction = decltype(&gpupeer_collective_elements);

/// The per-rank count the library takes and the output's elements for `op` on `inCount`
/// elements over `ranks`, by the library's `elements`; false where the Python path must take
/// the call (an input that does not split into the chunks the operation sends, an operation the
/// library refuses). Both element counts scale with count, so count 1 gives them per element.
inline bool countsFor(ElementsFunction elements, int op, long long inCount, int ranks, long long* count,
                      long long* outCount) {
  std::size_t send = 0, recv = 0;
  if (!elements || elements(op, 1, ranks, &send, &recv, nullptr) != GPUPEER_OK || send == 0) return false;
  const auto perSend = static_cast<long long>(send);
  if (inCount % perSend) return false;
  *count = inCount / perSend;
  *outCount = *count * static_cast<long long>(recv);
  return true;
}

/// What every state tuple starts with: (function_address, elements_address, comm, ...).
struct CallTarget {
  RunFunction function = nullptr;
  ElementsFunction elements = nullptr;
  void* comm = nullptr;
};

inline CallTarget targetOf(PyObject* state) {
  return {reinterpret_cast<RunFunction>(asPointer(PyTuple_GetItem(state, 0))),
          reinterpret_cast<ElementsFunction>(asPointer(PyTuple_GetItem(state, 1))),
          asPointer(PyTuple_GetItem(state, 2))};
}

/// Whether `op` may write over its input when no output is given.
inline bool inPlaceByDefault(int op) {
  return op == GPUPEER_ALL_REDUCE || op == GPUPEER_BROADCAST || op == GPUPEER_REDUCE;
}

/// Whether `o` reads as an output for `in`: same type, on `device`, `elements` long; its
/// pointer into *ptr.
template <class Read>
bool readOutput(Read read, PyObject* o, const TensorArgs& in, int device, long long elements, void** ptr) {
  TensorArgs out;
  if (!read(o, &out) || out.type != in.type || out.device != device || out.count != elements) return false;
  *ptr = out.ptr;
  return true;
}

/// torch_run(state, op, tensor, out, redop, root) -> the C function's return code, or None
/// where the Python path must take the call. state: (function_address, elements_address, comm,
/// device, ranks, error), one tuple per communicator (a functools.partial of five more
/// arguments would copy ten into a heap array on every call). The counts are the library's
/// (countsFor); out=None is in place where that exists.
/// read(PyObject*, TensorArgs*) -> bool: false (no Python error left set) declines the call.
/// stream(int device, PyObject* device_object, void** stream) -> bool: false with a Python error.
template <class Read, class Stream>
PyObject* runOnTensors(PyObject* const* args, Py_ssize_t count, Read read, Stream stream) {
  if (count != 6 || !PyTuple_Check(args[0]) || PyTuple_Size(args[0]) != 6) {
    PyErr_SetString(PyExc_TypeError, "torch_run(state: 6-tuple, op, tensor, out, redop, root)");
    return nullptr;
  }
  PyObject* state = args[0];
  const CallTarget target = targetOf(state);
  PyObject* deviceObject = PyTuple_GetItem(state, 3);
  int device = asInt(deviceObject), ranks = asInt(PyTuple_GetItem(state, 4));
  void* error = asPointer(PyTuple_GetItem(state, 5));
  int op = asInt(args[1]), redop = asInt(args[4]), root = asInt(args[5]);
  PyObject *tensor = args[2], *output = args[3];
  if (PyErr_Occurred()) return nullptr;
  TensorArgs in;
  if (!target.function || !target.comm || ranks < 1 || redop < 0 || !read(tensor, &in) || in.device != device)
    Py_RETURN_NONE;
  long long elements = 0, outElements = 0;
  if (op == GPUPEER_SEND_RECV || !countsFor(target.elements, op, in.count, ranks, &elements, &outElements))
    Py_RETURN_NONE;
  void* recv = in.ptr;
  if (output == Py_None) {
    if (!inPlaceByDefault(op)) Py_RETURN_NONE;
  } else if (!readOutput(read, output, in, device, outElements, &recv)) {
    Py_RETURN_NONE;
  }
  void* handle = nullptr;
  if (!stream(device, deviceObject, &handle)) return nullptr;
  return PyLong_FromLong(target.function(target.comm, op, in.ptr, recv, static_cast<std::size_t>(elements), in.type,
                                         redop, root, handle, error));
}

/// Item i of a list or tuple (borrowed) whose length lengthOf checked.
inline PyObject* itemOf(PyObject* sequence, Py_ssize_t i) {
  return PyList_Check(sequence) ? PyList_GetItem(sequence, i) : PyTuple_GetItem(sequence, i);
}

/// Length of a list or tuple; -1 for anything else.
inline Py_ssize_t lengthOf(PyObject* sequence) {
  if (PyList_Check(sequence)) return PyList_Size(sequence);
  if (PyTuple_Check(sequence)) return PyTuple_Size(sequence);
  return -1;
}

/// torch_run_many(state, op, tensors, outs, redop, root) -> the C function's return code, or
/// None where the Python path must take the call: one process's Communicator, one tensor per
/// rank. state: (function_address, elements_address, comm, devices, error), devices a tuple of
/// the ranks' GPUs.
/// Every tensor on its rank's GPU, of one type and count; outs None (in place, where that
/// exists) or one per rank, where reduce's may be None but for the root's. Each rank runs on
/// the current stream of its GPU. Same readers as runOnTensors.
template <class Read, class Stream>
PyObject* runOnTensorLists(PyObject* const* args, Py_ssize_t count, Read read, Stream stream) {
  if (count != 6 || !PyTuple_Check(args[0]) || PyTuple_Size(args[0]) != 5 ||
      !PyTuple_Check(PyTuple_GetItem(args[0], 3))) {
    PyErr_SetString(PyExc_TypeError,
                    "torch_run_many(state: (function, elements, comm, devices tuple, error), op, tensors, "
                    "outs, redop, root)");
    return nullptr;
  }
  PyObject* state = args[0];
  const CallTarget target = targetOf(state);
  PyObject* devices = PyTuple_GetItem(state, 3);
  void* error = asPointer(PyTuple_GetItem(state, 4));
  const Py_ssize_t ranks = PyTuple_Size(devices);
  int op = asInt(args[1]), redop = asInt(args[4]), root = asInt(args[5]);
  PyObject *tensors = args[2], *outputs = args[3];
  if (PyErr_Occurred()) return nullptr;
  if (!target.function || !target.comm || ranks < 1 || ranks > GPUPEER_MAX_COMM_RANKS || redop < 0 ||
      lengthOf(tensors) != ranks || (outputs != Py_None && lengthOf(outputs) != ranks))
    Py_RETURN_NONE;
  void *send[GPUPEER_MAX_COMM_RANKS] = {}, *recv[GPUPEER_MAX_COMM_RANKS] = {}, *streams[GPUPEER_MAX_COMM_RANKS] = {};
  int device[GPUPEER_MAX_COMM_RANKS] = {};
  TensorArgs first;
  long long elements = 0, outElements = 0;
  for (Py_ssize_t i = 0; i < ranks; ++i) {
    TensorArgs in;
    device[i] = asInt(PyTuple_GetItem(devices, i));
    if (PyErr_Occurred()) return nullptr;
    if (!read(itemOf(tensors, i), &in) || in.device != device[i]) Py_RETURN_NONE;
    if (i == 0) {
      first = in;
      if (!countsFor(target.elements, op, in.count, static_cast<int>(ranks), &elements, &outElements)) Py_RETURN_NONE;
    } else if (in.type != first.type || in.count != first.count) {
      Py_RETURN_NONE;
    }
    send[i] = in.ptr;
    if (outputs == Py_None) {
      if (!inPlaceByDefault(op)) Py_RETURN_NONE;
      recv[i] = in.ptr;
    } else if (PyObject* o = itemOf(outputs, i); o == Py_None && op == GPUPEER_REDUCE && i != root) {
      recv[i] = nullptr;  // only the root's output is written
    } else if (!readOutput(read, o, in, device[i], outElements, &recv[i])) {
      Py_RETURN_NONE;
    }
  }
  for (Py_ssize_t i = 0; i < ranks; ++i)
    if (!stream(device[i], PyTuple_GetItem(devices, i), &streams[i])) return nullptr;
  return PyLong_FromLong(target.function(target.comm, op, send, recv, static_cast<std::size_t>(elements), first.type,
                                         redop, root, streams, error));
}

/// The two entry points and their method table rows for one reader of tensors (Read) and one
/// way to find the current stream (Stream), as both modules export them.
template <bool (*Read)(PyObject*, TensorArgs*), bool (*Stream)(int, PyObject*, void**)>
struct TensorCalls {
  static PyObject* one(PyObject*, PyObject* const* args, Py_ssize_t count) {
    return runOnTensors(args, count, Read, Stream);
  }
  static PyObject* many(PyObject*, PyObject* const* args, Py_ssize_t count) {
    return runOnTensorLists(args, count, Read, Stream);
  }
  static PyMethodDef oneMethod() {
    return {"torch_run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(one)), METH_FASTCALL,
            "An eager collective on torch tensors read in C; None where Python must take the call."};
  }
  static PyMethodDef manyMethod() {
    return {"torch_run_many", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(many)), METH_FASTCALL,
            "The same for one process's Communicator: a tensor per rank; None where Python must take it."};
  }
};

}  // namespace gpupeer_python
