/* fuzz_reader.c — libFuzzer target over the snapshot reader (issue 6 item 5).
 *
 * Each input is one snapshot file: written to a memfd, loaded with vt_load_file
 * (analyzer/read/vt_reader.h) through /proc/self/fd/N (an explicitly named path, so the
 * symlink is followed), then, when it loads, analysed with vt_analyze_ex (no DWARF) so
 * the series and verdict code sees whatever the reader accepted. Everything is freed
 * each time (LeakSanitizer checks). A crash, sanitizer report, leak or timeout is a
 * finding; a rejected input (rs.err set) is the expected outcome for most inputs.
 *
 * Build: tests/fuzz/CMakeLists.txt, clang -fsanitize=fuzzer,address,undefined.
 * Run briefly from the saved corpus in CI (CTest fuzz_reader, run_fuzz.sh), longer
 * by hand:  build/tests/reliability/fuzz/fuzz_reader -max_total_time=600 NEWDIR tests/fuzz/corpus
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt_analysis.h"
#include "vt_reader.h"

static int memfd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("vt_fuzz.jsonl", MFD_CLOEXEC);
        if (memfd < 0)
            return 0;
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        return 0;
    vt_runset rs;
    memset(&rs, 0, sizeof rs);
    if (vt_load_file(&rs, path, 0) == 0) {
        vt_analysis a;
        vt_analyze_opts o = {.warmup = -1, .no_dwarf = 1};
        memset(&a, 0, sizeof a);
        vt_analyze_ex(&rs, &o, &a);
        vt_analysis_free(&a);
    }
    vt_runset_free(&rs);
    return 0;
}
