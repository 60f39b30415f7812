#pragma once
/// \file cuda_stream.hpp
/// cudaStream_t as the CUDA runtime declares it (an opaque pointer), for the headers whose
/// functions take a stream: they need no CUDA header, so that their host parts build without
/// the toolkit. Creating and using streams needs <cuda_runtime_api.h>, which declares the same
/// type.

struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;  // NOLINT(modernize-use-using): the runtime's own declaration
