"""A C function with gpupeer_rank_comm_run's signature that records its arguments: what the C
paths into the library (python/csrc/fastcall.cpp, python/csrc/torchcall.cpp) hand over, seen from C."""

import ctypes
import subprocess

import pytest

SOURCE = r"""
static long long seen[10];
static int calls, answer;
long long* recorded(void) { return seen; }
int recorded_calls(void) { return calls; }
void set_answer(int code) { answer = code; }
int gpupeer_rank_comm_run(void* c, int op, const void* s, void* r, unsigned long n, int t, int o, int root, void* st,
                          void* e) {
  long long v[10] = {(long long)c, op, (long long)s, (long long)r, (long long)n, t, o, root, (long long)st,
                     (long long)e};
  for (int i = 0; i < 10; ++i) seen[i] = v[i];
  ++calls;
  return answer;
}
/* gpupeer_collective_elements with a rule set by the test: every operation sends and receives
   these many elements per element of count. */
static unsigned long send_per_count = 1, recv_per_count = 1;
void set_elements_per_count(int send, int recv) { send_per_count = send, recv_per_count = recv; }
int gpupeer_collective_elements(int op, unsigned long count, int ranks, unsigned long* in, unsigned long* out,
                                void* error) {
  (void)op, (void)ranks, (void)error;
  *in = send_per_count * count;
  *out = recv_per_count * count;
  return 0;
}
/* gpupeer_comm_run takes arrays of one entry per rank: send, recv, streams. */
static long long lists[3][8];
static int list_ranks;
void set_list_ranks(int n) { list_ranks = n; }
long long* recorded_lists(void) { return &lists[0][0]; }
int gpupeer_comm_run(void* c, int op, const void* s, void* r, unsigned long n, int t, int o, int root, void* st,
                     void* e) {
  void* const* arrays[3] = {(void* const*)s, (void* const*)r, (void* const*)st};
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 8; ++i) lists[k][i] = i < list_ranks ? (long long)arrays[k][i] : 0;
  return gpupeer_rank_comm_run(c, op, s, r, n, t, o, root, st, e);
}
"""


def build_recorder(folder):
    """The recorder compiled into `folder` and loaded; the test is skipped without a C compiler.
    recorded() -> the last call's ten arguments, recorded_calls(), set_answer(code); through
    gpupeer_comm_run also recorded_lists() -> its three arrays, 8 entries each, of which it reads
    set_list_ranks(n); gpupeer_collective_elements answers by set_elements_per_count(send, recv)."""
    source, library = folder / "recorder.c", folder / "librecorder.so"
    source.write_text(SOURCE)
    try:
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip("no C compiler for the recording function: %s" % e)
    lib = ctypes.CDLL(str(library))
    lib.recorded.restype = ctypes.POINTER(ctypes.c_longlong)
    lib.recorded_lists.restype = ctypes.POINTER(ctypes.c_longlong)
    return lib


def address(lib, function="gpupeer_rank_comm_run"):
    """The recorder's address, as the C paths take their function."""
    return ctypes.cast(getattr(lib, function), ctypes.c_void_p).value
