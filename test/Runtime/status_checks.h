/*===- status_checks.h - status helpers of the C API tests ---------*- C -*-===*\
|*                                                                            *|
|* SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception                    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The two ways the runtime's C tests look at a call's status: one that
 * must succeed (check: prints the error and returns 1 otherwise) and one
 * that must fail with a given code (refused: prints the code and message,
 * the test's expected output, and returns 1 on anything else).
 */

#ifndef MNEMO_TEST_RUNTIME_STATUS_CHECKS_H
#define MNEMO_TEST_RUNTIME_STATUS_CHECKS_H

#include "mnemo/runtime.h"

#include <stdio.h>

static inline int check(mnemo_status_t status, const char *what) {
  if (!status)
    return 0;
  fprintf(stderr, "error: %s: %s\n", what, mnemo_status_message(status));
  mnemo_status_free(status);
  return 1;
}

static inline int refused(mnemo_status_t status, mnemo_status_code_t code,
                          const char *what) {
  if (!status) {
    fprintf(stderr, "error: %s was accepted\n", what);
    return 1;
  }
  int ok = mnemo_status_code(status) == code;
  printf("%s: %s: %s\n", what,
         mnemo_status_code_name(mnemo_status_code(status)),
         mnemo_status_message(status));
  mnemo_status_free(status);
  return !ok;
}

#endif /* MNEMO_TEST_RUNTIME_STATUS_CHECKS_H */
