/* vt_junit.h — the gates of `vramtrace check` (vt_check.h) and their JUnit XML form.
 *
 * The JUnit file is the form GitLab, Jenkins and GitHub test reporters read:
 * <testsuites> holding one <testsuite name="vramtrace check">, one <testcase> per
 * process and gate (classname "vramtrace.<process title>", name the gate), a failed
 * gate with <failure message="first line">full text</failure>, an inconclusive one
 * with <error type="inconclusive" ...>. Single-threaded.
 */
#ifndef VT_JUNIT_H
#define VT_JUNIT_H

#include <stddef.h>
#include <stdio.h>

enum { VT_GATE_PASS = 0, VT_GATE_FAIL = 1, VT_GATE_INCONCLUSIVE = 2 };

/* The most gates one process has (traced, complete, oom, steps, leak, unfreed, peak,
 * peak_increase). */
#define VT_GATES_PER_PROCESS 8

typedef struct vt_gate {
    char process[200];          /* the process title (vt_process_title) */
    const char *name;           /* the gate: "leak", "complete", ... (static) */
    int state;                  /* VT_GATE_* */
    char *text;                 /* what failed, lines ending in '\n'; NULL when it passed (owned) */
    size_t len;
} vt_gate;

/* Writes the n gates to f as JUnit XML and closes f (path: for messages). 0, or -1
 * after "vramtrace: cannot write PATH: ..." on stderr. */
int vt_junit_write(FILE *f, const char *path, const vt_gate *g, size_t n);

#endif /* VT_JUNIT_H */
