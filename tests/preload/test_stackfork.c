/* test_stackfork.c — the stack store's insert lock across fork (vt_stack_fork_*),
 * without LD_PRELOAD: one thread interns new stacks as fast as it can while the main
 * thread forks 200 times (the handlers registered as vt_lifecycle.c does); every child
 * must intern a stack of its own and exit 0 within 5 s (alarm: a child that inherited
 * the lock held would hang and die of SIGALRM). */
#define _GNU_SOURCE
#include "vt_stack.h"
#include "vt_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

static int stop;   /* atomic */

static void *inserter(void *arg)
{
    (void)arg;
    uintptr_t pcs[8];
    for (uintptr_t k = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED) && k < 400000; k++) {   /* bounded: ~40 MB of store */
        for (int i = 0; i < 8; i++)
            pcs[i] = 0x400000 + k * 64 + (uintptr_t)i;   /* a new stack every time */
        vt_stack_intern(pcs, 8);
    }
    return NULL;
}

int main(void)
{
    if (!getenv("VT_TEST_NO_ATFORK"))   /* set: shows the hang the handlers prevent */
        pthread_atfork(vt_stack_fork_prepare, vt_stack_fork_parent, vt_stack_fork_child);
    pthread_t th;
    pthread_create(&th, NULL, inserter, NULL);
    int bad = 0;
    for (int i = 0; i < 200; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            uintptr_t pcs[3] = { 0x900000, 0x900001, (uintptr_t)i };
            _exit(vt_stack_intern(pcs, 3) == UINT32_MAX ? 3 : 0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d: status %#x\n", i, st);
            bad++;
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    CHECK_EQ_INT(bad, 0);
    TEST_DONE();
}
