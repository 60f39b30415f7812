/* c_api.h as a C program sees it: the header compiles as C99 with -pedantic-errors, what it
   declares links against libgpupeer_c.so, and the calls that need no GPU answer as the header
   says. Prints one line per failed check and exits 1 on any. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpupeer/c_api.h"
#include "gpupeer/c_api.h" /* the include guard holds */

static int failures = 0;

static void expect(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "c_consumer: %s\n", what);
    ++failures;
  }
}

/* A gpupeer_all_gather_fn, to show that the callback type is usable from C. */
static int gatherNothing(void* user, const char* blob, size_t blob_bytes, char* out, char* message) {
  (void)user;
  (void)blob;
  (void)blob_bytes;
  (void)out;
  strcpy(message, "not used");
  return 1;
}

/* gpupeer_collective_elements with count 3 over 4 ranks: the known answer for each operation. */
static void checkElements(void) {
  static const struct {
    int op;
    size_t in, out;
  } expected[] = {
      {GPUPEER_ALL_REDUCE, 3, 3}, {GPUPEER_ALL_GATHER, 3, 12}, {GPUPEER_REDUCE_SCATTER, 12, 3},
      {GPUPEER_BROADCAST, 3, 3},  {GPUPEER_REDUCE, 3, 3},      {GPUPEER_ALL_TO_ALL, 12, 12},
      {GPUPEER_SEND_RECV, 3, 3},
  };
  size_t i, in = 0, out = 0;
  gpupeer_error* error = NULL;
  for (i = 0; i < sizeof expected / sizeof expected[0]; ++i) {
    int code = gpupeer_collective_elements(expected[i].op, 3, 4, &in, &out, &error);
    expect(code == GPUPEER_OK && error == NULL, "collective_elements failed on a known operation");
    expect(in == expected[i].in && out == expected[i].out, "collective_elements: wrong element counts");
  }
  expect(gpupeer_collective_elements(GPUPEER_SEND_RECV + 1, 3, 4, &in, &out, &error) == GPUPEER_INVALID_ARGUMENT,
         "collective_elements took an unknown operation");
  expect(error != NULL && gpupeer_error_code(error) == GPUPEER_INVALID_ARGUMENT, "no error record for the bad op");
  expect(error != NULL && strcmp(gpupeer_error_code_name(error), "invalid-argument") == 0, "code name");
  expect(error != NULL && strncmp(gpupeer_error_message(error), "op: ", 4) == 0, "the message names op");
  gpupeer_error_free(error);
  expect(gpupeer_collective_elements(GPUPEER_ALL_REDUCE, 3, 0, &in, &out, NULL) == GPUPEER_INVALID_ARGUMENT,
         "collective_elements took 0 ranks");
  expect(gpupeer_collective_elements(GPUPEER_ALL_GATHER, SIZE_MAX, 2, &in, &out, NULL) == GPUPEER_INVALID_ARGUMENT,
         "collective_elements overflowed");
}

int main(void) {
  gpupeer_code ok = GPUPEER_OK;
  gpupeer_comm* comm = NULL;
  gpupeer_rank_comm* rank = NULL;
  gpupeer_all_gather_fn gather = gatherNothing;
  gpupeer_error* error = NULL;
  char unique_id[GPUPEER_UNIQUE_ID_BYTES] = {0};

  expect(gpupeer_c_api_version() == GPUPEER_C_API_VERSION, "gpupeer_c_api_version differs from the header's");
  expect(gpupeer_version()[0] != '\0', "gpupeer_version is empty");
  expect(gpupeer_error_code(NULL) == (int)ok, "a null error record reads as GPUPEER_OK");
  checkElements();
  /* Null handles are refused with an error record, without a GPU. */
  expect(gpupeer_comm_run(comm, GPUPEER_ALL_REDUCE, NULL, NULL, 1, GPUPEER_FLOAT32, GPUPEER_SUM, 0, NULL, &error) ==
             GPUPEER_INVALID_ARGUMENT,
         "gpupeer_comm_run took a null communicator");
  gpupeer_error_free(error);
  expect(gpupeer_rank_comm_ranks(rank) == 0 && gpupeer_comm_ranks(comm) == 0, "a null communicator has no ranks");
  expect(gpupeer_rank_comm_init_all_gather(2, 0, gather, NULL, -1, 0, NULL, NULL) == GPUPEER_INVALID_ARGUMENT,
         "init_all_gather took a null output");
  expect(gpupeer_rank_comm_init(2, unique_id, 0, -1, 0, NULL, NULL) == GPUPEER_INVALID_ARGUMENT,
         "rank_comm_init took a null output");
  if (failures == 0) printf("c_consumer: c_api.h compiled as C99, linked and answered\n");
  return failures == 0 ? 0 : 1;
}
