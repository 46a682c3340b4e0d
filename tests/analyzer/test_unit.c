/* test_unit.c — unit tests of the analyzer library: SIZE parsing, the jansson
 * line reader (vt_jline), floor, Theil–Sen and the verdicts of docs/metrics.md on synthetic
 * step series, the interleaved view of a stack with Python frames (vt_pyview), the
 * per-line jansson arena (vt_jarena) and the parallel line parser (vt_lineparse). Prints one line per failed assertion; exit 1 if any failed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_demangle.h"
#include "vt_display.h"
#include "vt_jarena.h"
#include "vt_jline.h"
#include "vt_lineparse.h"
#include "vt_format.h"
#include "vt_oom.h"
#include "vt_pyview.h"
#include "vt_reader.h"
#include "vt_series.h"
#include "vt_size.h"

static int failures, checks;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        checks++;                                                               \
        if (!(cond)) {                                                          \
            failures++;                                                         \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

#define MiB (1024.0 * 1024.0)

static void test_size(void)
{
    static const struct { const char *s; int ok; uint64_t v; } cases[] = {
        {"4096", 1, 4096}, {"4KiB", 1, 4096}, {"4kib", 1, 4096}, {"1.5GiB", 1, 1610612736ULL}, {"2MB", 1, 2000000},
        {"2mb", 1, 2000000}, {"0", 1, 0}, {"3MiB", 1, 3145728}, {"1K", 1, 1024}, {"512B", 1, 512},
        {"18446744073709551615", 1, UINT64_MAX}, {"18446744073709551616", 0, 0}, {"-1", 0, 0}, {"", 0, 0},
        {"4 KiB", 0, 0}, {"1.5", 0, 0}, {"1.5B", 0, 0}, {"abc", 0, 0}, {"1.GiB", 0, 0}, {"20000000000GiB", 0, 0},
        {"KiB", 0, 0}, {"4KiBx", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        int rc = vt_size_parse(cases[i].s, &v);
        CHECK((rc == 0) == cases[i].ok, "\"%s\" rc %d", cases[i].s, rc);
        if (cases[i].ok) CHECK(v == cases[i].v, "\"%s\" -> %llu", cases[i].s, (unsigned long long)v);
        else CHECK(v == 12345, "\"%s\" changed the output on failure", cases[i].s);
    }
    char b[32];
    CHECK(!strcmp(vt_size_fmt(3145728, b, sizeof b), "3 MiB"), "%s", b);
    CHECK(!strcmp(vt_size_fmt(1536, b, sizeof b), "1.5 KiB"), "%s", b);
    CHECK(!strcmp(vt_size_fmt(100, b, sizeof b), "100 B"), "%s", b);
}

/* Parses text with vt_jline_load and reads its one-element array as u64. */
static int parse_u64(const char *text, uint64_t *v, char *err, size_t cap)
{
    char doc[128];
    snprintf(doc, sizeof doc, "[%s]", text);
    err[0] = 0;
    json_t *root = vt_jline_load(doc, strlen(doc), err, cap);
    if (!root) return -1;
    int rc = json_array_size(root) == 1 ? vt_ju64(json_array_get(root, 0), v, err, cap) : -1;
    json_decref(root);
    return rc;
}

static void test_json(void)
{
    uint64_t v;
    char err[300];
    /* the format's integers are at most 2^63-1 (docs/snapshot-format.md) */
    CHECK(parse_u64("9223372036854775807", &v, err, sizeof err) == 0 && v == 9223372036854775807ULL, "%s", err);
    CHECK(parse_u64("9223372036854775808", &v, err, sizeof err) < 0 && strstr(err, "exceeds 2^63-1"), "%s", err);
    CHECK(parse_u64("18446744073709551615", &v, err, sizeof err) < 0 && strstr(err, "exceeds 2^63-1"), "%s", err);
    CHECK(parse_u64("-5", &v, err, sizeof err) < 0 && strstr(err, "negative value -5"), "%s", err);
    CHECK(parse_u64("1.5", &v, err, sizeof err) < 0 && strstr(err, "not an integer"), "%s", err);
    CHECK(parse_u64("\"12\"", &v, err, sizeof err) < 0 && strstr(err, "got string"), "%s", err);
    CHECK(parse_u64("null", &v, err, sizeof err) < 0 && strstr(err, "got null"), "%s", err);
    CHECK(parse_u64("012", &v, err, sizeof err) < 0 && strstr(err, "column"), "leading zero accepted: %s", err);
    CHECK(parse_u64("0", &v, err, sizeof err) == 0 && v == 0, "%s", err);

    /* typed reads of every value class, escapes decoded by jansson */
    const char *doc = "{\"a\":[1,2,{\"b\":null}],\"s\":\"x\\u00e9\\n\\ud83d\\ude00\",\"t\":true,\"f\":-1.5e3,\"i\":-7}";
    json_t *root = vt_jline_load(doc, strlen(doc), err, sizeof err);
    CHECK(root != NULL, "%s", err);
    if (root) {
        const char *s = vt_jstr(json_object_get(root, "s"), 64, err, sizeof err);
        CHECK(s && strlen(s) == 8 && !memcmp(s, "x\xc3\xa9\n\xf0\x9f\x98\x80", 8), "decoded %s", s ? s : err);
        CHECK(vt_jstr(json_object_get(root, "s"), 4, err, sizeof err) == NULL && strstr(err, "longer than 4"), "%s", err);
        double d;
        CHECK(vt_jf64(json_object_get(root, "f"), &d, err, sizeof err) == 0 && d == -1500, "%g", d);
        int b;
        CHECK(vt_jbool(json_object_get(root, "t"), &b, err, sizeof err) == 0 && b == 1, "%s", err);
        CHECK(vt_jbool(json_object_get(root, "a"), &b, err, sizeof err) < 0 && strstr(err, "got array"), "%s", err);
        int64_t i;
        CHECK(vt_ji64(json_object_get(root, "i"), &i, err, sizeof err) == 0 && i == -7, "%s", err);
        CHECK(vt_ju64(json_object_get(root, "missing"), &v, err, sizeof err) < 0 && strstr(err, "got nothing"), "%s", err);
        json_decref(root);
    }

    static const char *const bad[] = {"{\"a\":1,}", "[1,]", "{\"a\" 1}", "[1 2]", "{\"a\":tru}", "\"abc", "{\"a\":\"\x01\"}",
                                      "[\"\\x\"]", "{,}", "[", "{\"a\":1}}", "{\"a\":1,\"a\":2}", "[\"\\u0000\"]", "[\"\xff\"]", "7"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        err[0] = 0;
        root = vt_jline_load(bad[k], strlen(bad[k]), err, sizeof err);
        CHECK(root == NULL && err[0], "accepted bad JSON %s", bad[k]);
        json_decref(root);
    }
    root = vt_jline_load("{\"a\":1,\"a\":2}", 13, err, sizeof err);
    CHECK(!root && strstr(err, "duplicate"), "duplicate keys: %s", err);
    /* depth: jansson stops at 2048 levels; 100000 nested '[' fail cleanly, no deep recursion */
    static char deep[200001];
    for (int d = 2048; d <= 2049; d++) {
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        root = vt_jline_load(deep, (size_t)d * 2, err, sizeof err);
        CHECK((root != NULL) == (d == 2048), "depth %d: %s", d, root ? "accepted" : err);
        json_decref(root);
    }
    memset(deep, '[', 100000);
    memset(deep + 100000, ']', 100000);
    root = vt_jline_load(deep, 200000, err, sizeof err);
    CHECK(!root && strstr(err, "nesting deeper than 2048"), "%s", err);
}

static void test_demangle(void)
{
    static const struct { const char *mangled, *sig, *name; } cases[] = {
        {"_ZL14remember_batchi", "remember_batch(int)", "remember_batch"},
        {"_ZN2ns3Foo4stepEv", "ns::Foo::step()", "ns::Foo::step"},
        {"_ZNK2ns3Foo4sizeEv", "ns::Foo::size() const", "ns::Foo::size"},
        {"_Z3fooIiEvT_", "void foo<int>(int)", "foo<int>"},
        {"_ZN3FooclEi", "Foo::operator()(int)", "Foo::operator()"},
        {"_ZN3FoocvbEv", "Foo::operator bool()", "Foo::operator bool"},
        {"_ZltRK1AS1_", "operator<(A const&, A const&)", "operator<"},
        {"_ZlsIiEvRK1AT_", "void operator<< <int>(A const&, int)", "operator<< <int>"},
        {"_ZN12_GLOBAL__N_13barEv", "(anonymous namespace)::bar()", "(anonymous namespace)::bar"},
        {"_Z3fooi.cold", "foo(int) [clone .cold]", "foo"},
        {"_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()"},
        {"_Znwm", "operator new(unsigned long)", "operator new"},
        {"_ZdaPv", "operator delete[](void*)", "operator delete[]"},
        {"_Z3bazB5cxx11v", "baz[abi:cxx11]()", "baz"},
        {"_ZSt4moveIRiEONSt16remove_referenceIT_E4typeEOS2_", "std::remove_reference<int&>::type&& std::move<int&>(int&)",
         "std::move<int&>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *sig = vt_demangle(cases[i].mangled);
        CHECK(sig && !strcmp(sig, cases[i].sig), "%s -> %s", cases[i].mangled, sig ? sig : "(null)");
        char *name = vt_demangled_name(cases[i].sig);
        CHECK(!strcmp(name, cases[i].name), "%s -> \"%s\", expected \"%s\"", cases[i].sig, name, cases[i].name);
        free(sig);
        free(name);
    }
    CHECK(vt_demangle("main") == NULL, "C name demangled");
    CHECK(vt_demangle("_Zgarbage!") == NULL, "invalid mangled name accepted");
    char *n = vt_demangled_name("cudaMalloc");
    CHECK(!strcmp(n, "cudaMalloc"), "%s", n);
    free(n);
    /* C names with a compiler's clone suffix */
    static const struct { const char *sym; size_t at; } clones[] = {
        {"hold.constprop.0", 4}, {"spike.isra.0", 5}, {"f.part.0", 1}, {"main.cold", 4},
        {"run_step.lto_priv.0", 8}, {"g.llvm.1234567", 1}, {"cudaMalloc", 0}, {".hidden", 0},
        {"x.", 0}, {"9a.b", 0}, {"a-b.c", 0},
        /* dotted names that are not clones: Go and Zig functions, a C++ file's
         * static initialiser named after its file */
        {"main.main", 0}, {"runtime.cgocall", 0}, {"main.allocBuffers", 0},
        {"_GLOBAL__sub_I_main.cpp", 0}, {"std.heap.alloc", 0},
        /* more of the compilers' clones */
        {"f.isra.0.constprop.0", 1}, {"g.localalias", 1}, {"h.cold.1", 1},
        {"k.part.0.lto_priv.0", 1}, {"m.__uniq.1234", 1}, {"n.specialized.1", 1},
    };
    for (size_t i = 0; i < sizeof clones / sizeof clones[0]; i++)
        CHECK(vt_clone_suffix_at(clones[i].sym) == clones[i].at, "%s -> %zu, expected %zu", clones[i].sym,
              vt_clone_suffix_at(clones[i].sym), clones[i].at);
}

static void test_floor_theil_sen(void)
{
    uint64_t v[] = {5, 3, 8, 4, 9, 9, 7}, f[7];
    vt_suffix_min(v, 7, f);
    uint64_t want[] = {3, 3, 4, 4, 7, 7, 7};
    CHECK(!memcmp(f, want, sizeof f), "suffix min");

    double x[300], y[300];
    for (int i = 0; i < 11; i++) { x[i] = i; y[i] = 3 * i + 7; }
    CHECK(fabs(vt_theil_sen(x, y, 11) - 3) < 1e-9, "line slope %g", vt_theil_sen(x, y, 11));
    /* 20% wild outliers do not move the median slope */
    for (int i = 0; i < 20; i++) { x[i] = i; y[i] = 2 * i + ((i % 5 == 0) ? 1e9 : 0); }
    CHECK(fabs(vt_theil_sen(x, y, 20) - 2) < 1e-9, "robust slope %g", vt_theil_sen(x, y, 20));
    /* even number of slopes: mean of the two middle ones; (0,0),(1,1),(2,4): slopes 1,2,3 -> 2; add (3,3): 1,2,1,3,1,-1 */
    double x2[] = {0, 1, 2}, y2[] = {0, 1, 4};
    CHECK(fabs(vt_theil_sen(x2, y2, 3) - 2) < 1e-9, "median of 3 slopes %g", vt_theil_sen(x2, y2, 3));
    double x3[] = {0, 1, 2, 3}, y3[] = {0, 1, 4, 3};
    CHECK(fabs(vt_theil_sen(x3, y3, 4) - 1) < 1e-9, "median of 6 slopes %g", vt_theil_sen(x3, y3, 4));
    /* thinned above VT_TS_MAX_POINTS points: still exact on a line with skipped step numbers */
    for (int i = 0; i < 300; i++) { x[i] = 2 * i; y[i] = 5.0 * 2 * i; }
    CHECK(fabs(vt_theil_sen(x, y, 300) - 5) < 1e-9, "thinned slope %g", vt_theil_sen(x, y, 300));
    CHECK(vt_theil_sen(x, y, 1) == 0, "one point");
    CHECK(vt_auto_warmup(60) == 6 && vt_auto_warmup(3) == 0 && vt_auto_warmup(5000) == 100 && vt_auto_warmup(4) == 1,
          "auto warm-up %zu %zu %zu", vt_auto_warmup(60), vt_auto_warmup(3), vt_auto_warmup(5000));
    CHECK(vt_exhaustion_step(10, 300, 3) == 110 && vt_exhaustion_step(10, 301, 3) == 111 && vt_exhaustion_step(10, 5, 0) == -1,
          "exhaustion step");
}

#define N 60
static uint64_t st[N], lv[N], pk[N];
static uint32_t nf[N];

static vt_verdict classify(size_t n, long warmup, vt_site_stats *out)
{
    for (size_t i = 0; i < n; i++) {
        st[i] = i;
        if (pk[i] < lv[i]) pk[i] = lv[i];
    }
    vt_series s = {.step = st, .live = lv, .peak = pk, .nfree = nf, .n = n};
    vt_classify(&s, warmup, out);
    return out->verdict;
}

static void reset(void)
{
    memset(lv, 0, sizeof lv);
    memset(pk, 0, sizeof pk);
    memset(nf, 0, sizeof nf);
}

static void test_verdicts(void)
{
    vt_site_stats s;
    /* keeps 3 MiB every step: leak at 3 MiB/step */
    reset();
    for (int i = 0; i < N; i++) lv[i] = (uint64_t)(i + 1) * 3 * 1048576;
    CHECK(classify(N, -1, &s) == VT_LEAK, "leak: %s", vt_verdict_name(s.verdict));
    CHECK(fabs(s.slope - 3 * MiB) < 1, "leak slope %g", s.slope);
    /* counted from the floor at the last warm-up step: each of the N - 6 judged steps' 3 MiB */
    CHECK(s.leaked_bytes == (uint64_t)(N - 6) * 3 * 1048576, "leaked %llu", (unsigned long long)s.leaked_bytes);
    CHECK(s.base_step == 5 && s.rises == N - 6 && s.first_judged_growth_step == 6, "base step %llu, rises %u",
          (unsigned long long)s.base_step, s.rises);
    CHECK(s.has_first_growth && s.first_growth_step == 1, "first growth %llu", (unsigned long long)s.first_growth_step);
    /* the same leak with a per-step temporary on top (peak above live, one free a step): still a leak */
    for (int i = 0; i < N; i++) { pk[i] = lv[i] + 64 * 1048576; nf[i] = 1; }
    CHECK(classify(N, -1, &s) == VT_LEAK, "leak+temp: %s", vt_verdict_name(s.verdict));

    /* a 64 MiB per-step temporary, freed before each step's snapshot: churn */
    reset();
    for (int i = 0; i < N; i++) { pk[i] = 64 * 1048576; nf[i] = 1; }
    CHECK(classify(N, -1, &s) == VT_CHURN, "temporary: %s", vt_verdict_name(s.verdict));
    /* ... seen live at every periodic snapshot: live constant, but freed every step: churn, not stable */
    reset();
    for (int i = 0; i < N; i++) { lv[i] = 64 * 1048576; nf[i] = i ? 1 : 0; }
    CHECK(classify(N, -1, &s) == VT_CHURN, "temporary at snapshots: %s", vt_verdict_name(s.verdict));

    /* warm-up then flat: plateau, with the default and with an explicit warm-up of 0 */
    reset();
    for (int i = 0; i < N; i++) lv[i] = (uint64_t)(i < 5 ? i + 1 : 5) * 32 * 1048576;
    CHECK(classify(N, -1, &s) == VT_PLATEAU, "plateau: %s", vt_verdict_name(s.verdict));
    CHECK(classify(N, 0, &s) == VT_PLATEAU && s.warmup == 0, "plateau, warm-up 0: %s", vt_verdict_name(s.verdict));
    /* growth for the first 40% of the run, then flat: stopped growth is a plateau */
    reset();
    for (int i = 0; i < N; i++) lv[i] = (uint64_t)(i < 24 ? i : 24) * 1048576;
    CHECK(classify(N, -1, &s) == VT_PLATEAU, "long warm-up growth: %s (slope %g)", vt_verdict_name(s.verdict), s.slope);

    /* frees batched every 10 steps (sawtooth), ending mid-batch: churn, not a leak */
    reset();
    for (int i = 0; i < 57; i++) { lv[i] = (uint64_t)(i % 10 + 1) * 8 * 1048576; nf[i] = i % 10 == 0 && i ? 10 : 0; }
    CHECK(classify(57, -1, &s) == VT_CHURN, "sawtooth: %s (slope %g, rises %u)", vt_verdict_name(s.verdict), s.slope, s.rises);

    /* constant weights: stable; freed in the last step: still stable (one give-back) */
    reset();
    for (int i = 0; i < N; i++) lv[i] = 512 * 1048576;
    CHECK(classify(N, -1, &s) == VT_STABLE && s.slope == 0, "weights: %s", vt_verdict_name(s.verdict));
    lv[N - 1] = 0;
    nf[N - 1] = 1;
    CHECK(classify(N, -1, &s) == VT_STABLE, "weights freed at the end: %s", vt_verdict_name(s.verdict));
    /* nothing at all */
    reset();
    CHECK(classify(N, -1, &s) == VT_STABLE && s.peak_bytes == 0, "empty: %s", vt_verdict_name(s.verdict));
    CHECK(classify(1, -1, &s) == VT_STABLE, "one step");

    /* a leak needs several rises: two jumps are not a leak */
    reset();
    for (int i = 0; i < N; i++) lv[i] = (uint64_t)(i >= 20) * 1048576 + (uint64_t)(i >= 58) * 1048576;
    CHECK(classify(N, -1, &s) != VT_LEAK, "two jumps: %s", vt_verdict_name(s.verdict));
    /* a leak hidden under noise that falls back: floor still rises 1 MiB/step */
    reset();
    for (int i = 0; i < N; i++) { lv[i] = (uint64_t)i * 1048576 + (i % 3 == 1 ? 50 * 1048576 : 0); nf[i] = 1; }
    CHECK(classify(N, -1, &s) == VT_LEAK && fabs(s.slope - MiB) < 1, "noisy leak: %s %g", vt_verdict_name(s.verdict), s.slope);
}

/* view entries as text: "n3" native frame 3, "p1" Python frame 1 */
static const char *view_str(const vt_stack *st, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < st->nview && o + 8 < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%c%d", i ? " " : "", st->view[i] < 0 ? 'p' : 'n',
                              st->view[i] < 0 ? -1 - st->view[i] : st->view[i]);
    return buf;
}

static void test_pyview(void)
{
    vt_module py = {.path = "/usr/lib/libpython3.12.so.1.0"}, ffi = {.path = "/usr/lib/libffi.so.8"},
              ext = {.path = "/opt/ext/libtorch_python.so"}, exe = {.path = "/usr/bin/python3.12"},
              app = {.path = "/opt/app/bin/server"}, libc = {.path = "/lib/libc.so.6"};
    /* 0 ext, 1 ffi, 2 eval, 3 py-internal, 4 ext, 5 eval, 6 libc, 7 exe */
    vt_frame fr[] = {{&ext, 1, NULL}, {&ffi, 2, NULL}, {&py, 3, NULL}, {&py, 4, NULL},
                     {&ext, 5, NULL}, {&py, 3, NULL}, {&libc, 6, NULL}, {&exe, 7, NULL}};
    /* written out of native_index order on purpose; one frame cut (-1) */
    vt_pyframe pf[] = {{"/srv/m.py", "inner", 3, 2}, {"/srv/m.py", "outer", 9, 5}, {"/srv/m.py", "mid", 5, 2},
                       {"/srv/top.py", "<module>", 1, -1}};
    vt_stack st = {.nframes = 8, .frames = fr, .npy = 4, .py = pf};
    char buf[200];
    vt_stack_view(&st);
    CHECK(!strcmp(view_str(&st, buf, sizeof buf), "n0 p0 p2 n4 p1 n6 p3"), "interleaved view %s", buf);
    CHECK(st.title == 1, "title %u", st.title);
    /* the innermost Python frame is vramtrace's own: the title is the next one */
    pf[0].file = "/venv/lib/python3.12/site-packages/vramtrace/peaks.py";
    vt_stack_view(&st);
    CHECK(st.title == 2, "title past vramtrace's frame: %u", st.title);
    CHECK(vt_pyframe_is_own(&pf[0]) && !vt_pyframe_is_own(&pf[1]), "own package");
    vt_pyframe own2 = {"vramtrace/x.py", "f", 1, 0}, notown = {"/srv/myvramtrace/x.py", "f", 1, 0};
    CHECK(vt_pyframe_is_own(&own2) && !vt_pyframe_is_own(&notown), "own package (relative, lookalike)");
    /* no Python frames: every native frame, glue or not */
    st.npy = 0;
    vt_stack_view(&st);
    CHECK(!strcmp(view_str(&st, buf, sizeof buf), "n0 n1 n2 n3 n4 n5 n6 n7"), "native-only view %s", buf);
    CHECK(st.title == 0, "native-only title %u", st.title);
    /* a program that embeds the interpreter (the eval loop is in the program):
     * CPython's frames are left out, the program's own stay */
    vt_frame fr2[] = {{&app, 9, "app_alloc"}, {&app, 8, NULL}, {&app, 1, "_PyObject_MakeTpCall"},
                      {&app, 5, "method_vectorcall_O"}, {&app, 2, "_PyEval_EvalFrameDefault"}, {&libc, 3, NULL}};
    vt_pyframe pf2[] = {{"/srv/a.py", "f", 2, 4}};
    vt_stack st2 = {.nframes = 6, .frames = fr2, .npy = 1, .py = pf2};
    vt_stack_view(&st2);
    CHECK(!strcmp(view_str(&st2, buf, sizeof buf), "n0 n1 p0 n5"), "embedded interpreter view %s", buf);
    CHECK(st2.title == 2, "embedded title %u", st2.title);
    free(st.view);
    free(st2.view);
}

/* vt_jarena: trees parsed inside an arena are valid until end; jansson outside an
 * arena still uses malloc/free (json_decref works there). */
static void test_jarena(void)
{
    vt_jarena a = {0};
    char err[300];
    for (int round = 0; round < 3; round++) {
        vt_jarena_begin(&a);
        /* a line bigger than the first 1 MiB chunk: several chunks, then one */
        size_t n = 300000;
        char *line = malloc(n * 4 + 16);
        size_t len = 0;
        line[len++] = '[';
        for (size_t i = 0; i < n; i++) len += (size_t)sprintf(line + len, "%s%d", i ? "," : "", (int)(i % 10));
        line[len++] = ']';
        json_t *root = vt_jline_load(line, len, err, sizeof err);
        CHECK(root && json_array_size(root) == n, "round %d: %zu elements", round, root ? json_array_size(root) : 0);
        CHECK(root && json_integer_value(json_array_get(root, n - 1)) == (json_int_t)((n - 1) % 10), "last element");
        vt_jarena_end(&a);
        free(line);
    }
    json_t *o = json_pack("{s:[i,i]}", "k", 1, 2);   /* no arena active: malloc */
    CHECK(o && json_array_size(json_object_get(o, "k")) == 2, "tree outside an arena");
    json_decref(o);
    vt_jarena_release(&a);
}

/* fold callback of test_lineparse: each line is [i]; records the order */
typedef struct { long next, fail_at, folded; int saw_error; } lp_ctx;

static int lp_fold(void *ctx, const char *text, size_t len, json_t *root, const char *err)
{
    lp_ctx *c = ctx;
    (void)text;
    (void)len;
    if (!root) {
        CHECK(c->next == c->fail_at, "parse error at line %ld, expected at %ld (%s)", c->next, c->fail_at, err);
        CHECK(err && strstr(err, "column"), "error message %s", err ? err : "(null)");
        c->saw_error = 1;
        return 7;
    }
    CHECK(json_is_array(root) && json_integer_value(json_array_get(root, 0)) == c->next,
          "line %ld folded out of order", c->next);
    c->next++;
    c->folded++;
    return 0;
}

/* vt_lineparse: lines come back in order across batches and threads, finish works
 * whatever the ring's state (full, empty, partial), a parse error stops folding at
 * exactly that line, and a fold error is sticky. */
static void test_lineparse(void)
{
    static const int thread_counts[] = {1, 2, 3, VT_LP_MAX_THREADS};
    for (size_t tc = 0; tc < sizeof thread_counts / sizeof thread_counts[0]; tc++) {
        int threads = thread_counts[tc];
        for (long total = 0; total <= 40000; total += 9999) {
            vt_lp *lp = vt_lp_new(threads);
            CHECK(lp != NULL, "vt_lp_new(%d)", threads);
            if (!lp) return;
            lp_ctx c = {0, -1, 0, 0};
            char line[64];
            int rc = 0;
            for (long i = 0; i < total && !rc; i++) {
                int n = snprintf(line, sizeof line, "[%ld]", i);
                rc = vt_lp_push(lp, line, (size_t)n, lp_fold, &c);
                if (i % 5000 == 4999) rc = rc ? rc : vt_lp_finish(lp, lp_fold, &c);   /* mid-stream */
            }
            rc = rc ? rc : vt_lp_finish(lp, lp_fold, &c);
            CHECK(rc == 0 && c.folded == total, "threads %d: %ld of %ld lines folded (rc %d)", threads, c.folded, total, rc);
            vt_lp_free(lp);
        }
        /* finish right when the ring is exactly full (and around it): fixed-width
         * lines fill a batch every VT_LP_BATCH / 8 lines */
        long slots = 2 * threads < 4 ? 4 : 2 * threads;   /* the ring's size (vt_lineparse.h) */
        long per = (long)(VT_LP_BATCH / 8), totals[] = {per * slots, per * slots - 1,
                                                        per * slots + 1, per, 3 * per * slots};
        for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
            vt_lp *lp = vt_lp_new(threads);
            lp_ctx c = {0, -1, 0, 0};
            char line[64];
            int rc = 0;
            for (long i = 0; i < totals[t] && !rc; i++) {
                int n = snprintf(line, sizeof line, "[%6ld]", i);   /* 8 bytes */
                rc = vt_lp_push(lp, line, (size_t)n, lp_fold, &c);
            }
            rc = rc ? rc : vt_lp_finish(lp, lp_fold, &c);
            CHECK(rc == 0 && c.folded == totals[t], "threads %d: %ld of %ld lines folded (ring case)", threads,
                  c.folded, totals[t]);
            vt_lp_free(lp);
        }
        /* a bad line in the middle: folding stops there, the error is sticky */
        vt_lp *lp = vt_lp_new(threads);
        lp_ctx c = {0, 12345, 0, 0};
        char line[64];
        int rc = 0;
        for (long i = 0; i < 30000; i++) {
            int n = i == c.fail_at ? snprintf(line, sizeof line, "[%ld,", i) : snprintf(line, sizeof line, "[%ld]", i);
            int r = vt_lp_push(lp, line, (size_t)n, lp_fold, &c);
            if (r && !rc) rc = r;
        }
        int rf = vt_lp_finish(lp, lp_fold, &c);
        CHECK(rf == 7 && (rc == 0 || rc == 7), "threads %d: finish %d push %d", threads, rf, rc);
        CHECK(c.saw_error && c.folded == c.fail_at, "threads %d: folded %ld lines before the error", threads, c.folded);
        vt_lp_free(lp);
    }
    vt_lp *lp = vt_lp_new(2);   /* freed with batches in flight: no leak, no hang */
    lp_ctx c = {0, -1, 0, 0};
    for (long i = 0; i < 3000; i++) {
        char line[64];
        int n = snprintf(line, sizeof line, "[%ld]", i);
        vt_lp_push(lp, line, (size_t)n, lp_fold, &c);
    }
    vt_lp_free(lp);
    CHECK(vt_lp_default_threads() >= 0 && vt_lp_default_threads() <= VT_LP_MAX_THREADS, "default threads");
}

/* The reader gives the same model with 0, 2 and VT_LP_MAX_THREADS parser threads, for format
 * versions 1 and 2 of the same program (golden sets). */
static void test_read_threads(const char *golden)
{
    static const char *const sets[] = {"leak_churn-step", "leak_churn-step-v2", "reset-periodic",
                                       "reset-periodic-v2", "oom_frag-step-v2"};
    uint64_t totals[2][2] = {{0}};
    static const int nthreads[3] = {0, 2, VT_LP_MAX_THREADS};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", golden, sets[k]);
        char *paths[] = {path};
        vt_runset rs[3];
        for (int t = 0; t < 3; t++) {
            memset(&rs[t], 0, sizeof rs[t]);
            rs[t].read_threads = nthreads[t];
            CHECK(vt_load_paths(&rs[t], paths, 1) == 0, "%s: %s", sets[k], rs[t].err);
        }
        CHECK(rs[0].n == 1 && rs[1].n == 1 && rs[2].n == 1, "%s: processes", sets[k]);
        for (int t = 1; t < 3 && rs[0].n == 1 && rs[t].n == 1; t++) {
            const vt_process *a = rs[0].procs[0], *b = rs[t].procs[0];
            CHECK(a->nsteps == b->nsteps && a->nsteps > 10, "%s: steps %zu vs %zu", sets[k], a->nsteps, b->nsteps);
            CHECK(a->nsites == b->nsites, "%s: sites", sets[k]);
            CHECK(a->unfreed_exit_bytes == b->unfreed_exit_bytes, "%s: unfreed", sets[k]);
            for (size_t i = 0; i < a->nsteps && i < b->nsteps; i++)
                CHECK(a->step_total[i] == b->step_total[i], "%s: step %zu total", sets[k], i);
            if (k < 2) {   /* leak_churn in both versions: the same series */
                totals[k][0] = a->nsteps ? a->step_total[a->nsteps - 1] : 0;
                totals[k][1] = a->unfreed_exit_bytes;
            }
        }
        for (int t = 0; t < 3; t++)
            vt_runset_free(&rs[t]);
    }
    CHECK(totals[0][0] == totals[1][0] && totals[0][0] > 0 && totals[0][1] == totals[1][1],
          "versions 1 and 2: last step %llu vs %llu", (unsigned long long)totals[0][0], (unsigned long long)totals[1][0]);
}

/* vt_display: the display form of names a traced program chose (vt_display.h) */
static void test_display(void)
{
    static const struct { const char *in, *out; } cases[] = {
        {"plain ascii (file.c:12)", "plain ascii (file.c:12)"},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"}, /* é € 😀 kept */
        {"\x1b]0;owned\x07\x1b[2J\r\nFAKE", "\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0aFAKE"},
        {"tab\there\x7f", "tab\\x09here\\x7f"},
        {"bad \xff\xfe end", "bad \\xff\\xfe end"},                 /* not UTF-8 */
        {"over\xc0\xaflong", "over\\xc0\\xaflong"},                 /* overlong '/' */
        {"surr\xed\xb3\xbf", "surr\\xed\\xb3\\xbf"},              /* U+DCFF */
        {"cut \xe2\x82", "cut \\xe2\\x82"},                         /* half a character at the end */
        {"c1 \xc2\x9b[2J", "c1 \\u009b[2J"},                          /* U+009B, CSI */
        {"rlo \xe2\x80\xae evil", "rlo \\u202e evil"},               /* U+202E */
        {"ls \xe2\x80\xa8 x", "ls \\u2028 x"},
        {"back\\slash", "back\\slash"},
        {"", ""},
    };
    char buf[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = vt_display(buf, sizeof buf, cases[i].in);
        CHECK(!strcmp(buf, cases[i].out), "case %zu: \"%s\"", i, buf);
        CHECK(n == strlen(cases[i].out), "case %zu: length %zu", i, n);
        CHECK(vt_display_clean(cases[i].in) == !strcmp(cases[i].in, cases[i].out), "case %zu: clean", i);
        char *d = vt_xdisplay(cases[i].in);
        CHECK(!strcmp(d, cases[i].out), "case %zu: xdisplay \"%s\"", i, d);
        free(d);
    }
    /* a cut never splits an escape or a character */
    char small[8];
    size_t n = vt_display(small, sizeof small, "ab\x1b\x1b");   /* "ab\x1b\x1b" needs 10 */
    CHECK(!strcmp(small, "ab\\x1b") && n == 10, "cut escape: \"%s\" %zu", small, n);
    n = vt_display(small, 5, "a\xe2\x82\xac" "b");                  /* a€b: the € (3 bytes) fits in 5 */
    CHECK(!strcmp(small, "a\xe2\x82\xac") && n == 5, "cut char: \"%s\" %zu", small, n);
    n = vt_display(small, 4, "a\xe2\x82\xac" "b");
    CHECK(!strcmp(small, "a") && n == 5, "cut char 2: \"%s\" %zu", small, n);
    /* vt_utf8_trim drops only a cut last character */
    char t1[] = "ab\xc3\xa9", t2[] = "ab\xc3", t3[] = "ab\xf0\x9f\x98", t4[] = "abc", t5[] = "\xe2\x82\xac";
    vt_utf8_trim(t1); vt_utf8_trim(t2); vt_utf8_trim(t3); vt_utf8_trim(t4); vt_utf8_trim(t5);
    CHECK(!strcmp(t1, "ab\xc3\xa9"), "trim whole");
    CHECK(!strcmp(t2, "ab"), "trim 2-byte cut: \"%s\"", t2);
    CHECK(!strcmp(t3, "ab"), "trim 4-byte cut: \"%s\"", t3);
    CHECK(!strcmp(t4, "abc") && !strcmp(t5, "\xe2\x82\xac"), "trim ascii / whole 3-byte");
}

/* Verdicts that say what the data says (docs/metrics.md "Verdicts"). */
static void test_verdicts_truth(void)
{
    vt_site_stats s;
    /* a leak that starts in the last 20 % of the run and is still rising at the end:
     * 100 MiB flat for 48 steps, then +1 MiB at each of the last 12 */
    reset();
    for (int i = 0; i < N; i++) lv[i] = (uint64_t)(100 + (i < 48 ? 0 : i - 47)) * MiB;
    CHECK(classify(N, -1, &s) == VT_LEAK, "late leak: %s (slope %g)", vt_verdict_name(s.verdict), s.slope);
    CHECK(fabs(s.slope - MiB) < 1, "late leak slope %g, expected 1 MiB/step", s.slope);
    CHECK(s.leaked_bytes == 12 * MiB, "late leak leaked %llu", (unsigned long long)s.leaked_bytes);
    /* the same growth stopped 3 steps before the end: not rising at the end, a plateau */
    for (int i = N - 3; i < N; i++) lv[i] = pk[i] = lv[N - 4];
    CHECK(classify(N, -1, &s) == VT_PLATEAU, "late growth that stopped: %s", vt_verdict_name(s.verdict));
    /* a buffer taken once and given back inside one step: transient, not stable */
    reset();
    pk[30] = 256 * MiB;
    nf[30] = 1;
    CHECK(classify(N, -1, &s) == VT_TRANSIENT, "brief buffer: %s", vt_verdict_name(s.verdict));
    /* ... and one held across two steps' snapshots */
    reset();
    lv[30] = lv[31] = 8 * MiB;
    nf[32] = 1;
    CHECK(classify(N, -1, &s) == VT_TRANSIENT, "buffer over two steps: %s", vt_verdict_name(s.verdict));
    /* 3 steps of 10 MiB held: too few steps to judge, never "stable" */
    reset();
    for (int i = 0; i < 3; i++) lv[i] = 10 * MiB;
    CHECK(classify(3, -1, &s) == VT_TOO_FEW, "3 steps: %s", vt_verdict_name(s.verdict));
    CHECK(!strcmp(vt_verdict_name(VT_TOO_FEW), "too_few_steps"), "name %s", vt_verdict_name(VT_TOO_FEW));
    /* a site that never held memory (its calls all failed) stays stable */
    reset();
    CHECK(classify(3, -1, &s) == VT_STABLE, "nothing held, 3 steps: %s", vt_verdict_name(s.verdict));
}

/* The OOM address map (vt_oom_block): touching blocks of one site are one run; above
 * VT_OOM_MAP runs the smallest gaps are merged away, the largest stay exact, and the
 * runs still cover every block. */
static void test_oom_map(void)
{
    for (int big = 0; big < 2; big++) {
        vt_process *pp = calloc(1, sizeof *pp), p0;
        vt_snaprec rec;
        memset(&rec, 0, sizeof rec);
        rec.oom.present = 1;
        rec.oom.requested = 1 << 20;
        rec.oom.stack = -1;
        rec.have_allocs = 1;
        size_t n = big ? 1000 : 40;
        rec.ae = calloc(n, sizeof *rec.ae);
        uint64_t addr = 0x700000000000ULL, gaps = 0, largest = 0;
        for (size_t i = 0; i < n; i++) {
            /* pairs of touching blocks of one site, then a gap: i * 37 % 101 KiB (the
             * largest, 100 KiB, recurs), every 97th gap 10 MiB */
            rec.ae[i] = (vt_alloc){.addr = addr, .size = 4096, .stack = (int64_t)(i / 2 % 3), .kind = VT_KIND_DEVICE, .device = 0};
            addr += 4096;
            if (i % 2 == 1 && i + 1 < n) {
                uint64_t g = i % 97 == 1 ? 10 << 20 : (uint64_t)(i * 37 % 101) << 10;
                addr += g;
                gaps += g;
                if (g > largest) largest = g;
            }
        }
        rec.nae = n;
        vt_oom_build(pp, &rec);
        p0 = *pp;
        CHECK(p0.nooms == 1, "one OOM");
        const vt_oom *o = &p0.ooms[0];
        uint64_t blocks = 0, in = 0, covered = 0, kept_largest = 0;
        for (uint32_t i = 0; i < o->nmap; i++) {
            blocks += o->map[i].blocks;
            in += o->map[i].gaps_in;
            covered += o->map[i].size;
            if (i) {
                uint64_t g = o->map[i].addr - (o->map[i - 1].addr + o->map[i - 1].size);
                if (g > kept_largest) kept_largest = g;
            }
        }
        CHECK(o->nmap == (big ? VT_OOM_MAP : n / 2), "runs: %u", o->nmap);
        CHECK(blocks == n, "blocks %llu of %zu", (unsigned long long)blocks, n);
        CHECK(o->map[0].addr == 0x700000000000ULL && covered + (o->gap_total - in) == addr - 0x700000000000ULL,
              "runs and gaps span the blocks");
        CHECK(kept_largest == largest && o->gap_largest == largest, "the largest gap is kept: %llu", (unsigned long long)kept_largest);
        CHECK(!big || in > 0, "small gaps merged into runs");
        free(rec.ae);
        vt_process_free(pp);
    }
}

int main(int argc, char **argv)
{
    test_display();
    test_jarena();
    test_lineparse();
    if (argc > 1) test_read_threads(argv[1]);
    else CHECK(0, "usage: analyzer_unit GOLDEN_DIR");
    test_pyview();
    test_size();
    test_json();
    test_demangle();
    test_floor_theil_sen();
    test_verdicts();
    test_verdicts_truth();
    test_oom_map();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
