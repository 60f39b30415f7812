// gpupeer._torchcall: the eager collective on torch tensors with the tensors read through
// at::Tensor instead of torch's Python methods. Each of those methods costs ~0.1 us on the GPU
// machine's CPython 3.12 (argument parsing, a Python int made per answer), and a call reads five
// per tensor plus the current stream: most of what fastcall.cpp's torch_run adds. Here the same
// reads are C++ member calls.
//
// Built against the torch it runs with (C++ ABI, at::Tensor's layout): python/csrc/build_torchcall.py
// compiles it on the machine where that torch is, beside libgpupeer_c.so. Where it is missing,
// or was built for another torch and fails to import, the package uses fastcall.cpp's torch_run.
// Same calls taken and declined as there (tensor_call.hpp); exceptions from torch decline.
#include <Python.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <array>
#include <cstddef>

#include "tensor_call.hpp"

namespace {

// c_api.h's type code of each torch scalar type; -1 where the library has none.
std::array<int, static_cast<std::size_t>(c10::ScalarType::NumOptions)> typeCodes;
bool ready = false;

/// setup({torch.dtype: c_api.h type code}) -> None: the package's one table of type codes.
PyObject* setup(PyObject*, PyObject* const* args, Py_ssize_t count) {
  if (count != 1 || !PyDict_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "setup(type_codes: dict)");
    return nullptr;
  }
  std::array<int, typeCodes.size()> codes;
  codes.fill(-1);
  PyObject *key = nullptr, *value = nullptr;
  Py_ssize_t at = 0;
  while (PyDict_Next(args[0], &at, &key, &value)) {
    if (!THPDtype_Check(key) || !PyLong_Check(value)) {
      PyErr_SetString(PyExc_TypeError, "setup: keys must be torch.dtype, values int");
      return nullptr;
    }
    codes[static_cast<std::size_t>(reinterpret_cast<THPDtype*>(key)->scalar_type)] =
        static_cast<int>(PyLong_AsLong(value));
  }
  typeCodes = codes;
  ready = true;
  Py_RETURN_NONE;
}

/// Whether `x` is a torch.Tensor or nn.Parameter (exactly: a subclass may override what is read)
/// that is dense, contiguous, of a supported type and has storage, read into *out.
bool readTensor(PyObject* x, gpupeer_python::TensorArgs* out) {
  if (!ready || !THPVariable_CheckExact(x)) return false;
  try {
    const at::Tensor& t = THPVariable_Unpack(x);
    if (!t.defined() || t.layout() != c10::kStrided || t.is_nested() || !t.has_storage()) return false;
    const int code = typeCodes[static_cast<std::size_t>(t.scalar_type())];
    if (code < 0 || !t.is_contiguous()) return false;
    out->ptr = t.data_ptr();
    out->count = t.numel();
    out->type = code;
    out->device = t.is_cuda() ? t.get_device() : -1;
    return true;
  } catch (...) {  // nothing from torch crosses into Python here: the Python path words it
    return false;
  }
}

/// torch's current stream on `device`.
bool currentStream(int device, PyObject*, void** handle) {
  try {
    *handle = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
    return true;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return false;
  }
}

// torch_run(state, op, tensor, out, redop, root) and torch_run_many(state, op, tensors, outs,
// redop, root): tensor_call.hpp's runOnTensors and runOnTensorLists with this reader.
using Calls = gpupeer_python::TensorCalls<readTensor, currentStream>;

PyMethodDef methods[] = {{"setup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(setup)),
                          METH_FASTCALL, "Hands over the type code of each torch.dtype."},
                         Calls::oneMethod(),
                         Calls::manyMethod(),
                         {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_torchcall",
                      "gpupeer's eager call path on at::Tensor",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

#ifndef GPUPEER_TORCH_BUILD
#error "GPUPEER_TORCH_BUILD: the torch version and revision this is built for (python/csrc/build_torchcall.py sets it)"
#endif

PyMODINIT_FUNC PyInit__torchcall(void) {
  PyObject* m = PyModule_Create(&module);
  // The package compares it with the torch in the process before using anything here.
  if (m && PyModule_AddStringConstant(m, "torch_build", GPUPEER_TORCH_BUILD) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
