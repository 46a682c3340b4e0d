/* prog_cancel.c — a thread cancelled (deferred) just before a hooked call / vramtrace_step.
 * usage: prog_cancel MODE (0: T1 makes the first allocation; 1: later; 2: T1's call fails
 * under SIMCUDA_FAIL_AT, then a manual snapshot; 3: T1 marks a step; 4: main OOM after;
 * 5: another size). Output must be the same with and without libvramtrace. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vramtrace.h"
static sem_t ready, cancelled;
static int mode;
static void *t1(void *a){
  (void)a;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  sem_post(&ready); sem_wait(&cancelled);
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  void *p = NULL; int rc;
  if (mode == 3) { vramtrace_step(); rc = -1; }
  else rc = cudaMalloc(&p, (mode == 2 || mode == 4 || mode == 5) ? 1000 : 4096);  /* mode 2: this call is made to fail (SIMCUDA_FAIL_AT) */
  char msg[64]; int n = snprintf(msg, sizeof msg, "T1 cudaMalloc rc=%d\n", rc);
  if (write(1, msg, n) < 0) return NULL;   /* a cancellation point of the program itself */
  return NULL;
}
int main(int argc, char **argv){
  mode = argc > 1 ? atoi(argv[1]) : 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (mode != 0) { void *q; cudaMalloc(&q, 64); }   /* mode 0: T1 makes the first allocation of the process */
  sem_init(&ready, 0, 0); sem_init(&cancelled, 0, 0);
  pthread_t t; pthread_create(&t, NULL, t1, NULL);
  sem_wait(&ready); pthread_cancel(t); sem_post(&cancelled);
  void *r; pthread_join(t, &r);
  printf("T1 %s\n", r == PTHREAD_CANCELED ? "cancelled" : "finished");
  void *p; int rc = cudaMalloc(&p, 8192);
  printf("main cudaMalloc rc=%d\n", rc);
  if (mode == 2) printf("snapshot rc=%d\n", vramtrace_snapshot("after-cancel"));
  if (mode == 4) { void *z; printf("main big rc=%d\n", cudaMalloc(&z, 1 << 30)); }
  return 0;
}
