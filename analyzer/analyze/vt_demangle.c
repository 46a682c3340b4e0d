/* vt_demangle.c — C++ demangling via libstdc++'s __cxa_demangle and the
 * parameter-list cut on its output (contract in vt_demangle.h).
 *
 * Design: demangling itself is the runtime library's job; this file only reads
 * the demangler's output, whose shape is fixed: [return-type ' '] qualified-name
 * '(' params ')' [' const'|' volatile'|' &'|' &&'] [' [clone .x]']... The name
 * may contain balanced (), <>, [], {} (anonymous namespaces, templates, ABI tags,
 * lambdas) and operator names whose punctuation is not balanced ("operator<").
 */
#include "vt_demangle.h"

#include <stdlib.h>
#include <string.h>

#include "vt_util.h"

/* The Itanium C++ ABI demangler, exported by libstdc++ (<cxxabi.h> declares it
 * for C++ in namespace abi, with C linkage). */
extern char *__cxa_demangle(const char *mangled_name, char *output_buffer, size_t *length, int *status);

char *vt_demangle(const char *sym)
{
    if (!sym || strncmp(sym, "_Z", 2) != 0) return NULL;
    int status = 0;
    char *d = __cxa_demangle(sym, NULL, NULL, &status);
    if (status != 0 || !d) {
        free(d);
        return NULL;
    }
    return d;
}

static int ends_with(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Length of the operator name that starts at s ("operator" already matched at
 * s - 8): punctuation operators, "()" and "[]", or " new", " delete[]", and a
 * conversion's " type". */
static size_t operator_tail(const char *s)
{
    if (s[0] == '(' && s[1] == ')') return 2;
    if (s[0] == '[' && s[1] == ']') return 2;
    if (s[0] == ' ') {
        size_t i = 1;
        while (s[i] && s[i] != '(') i++;   /* up to the parameter list */
        return i;
    }
    size_t i = 0;
    while (i < 3 && s[i] && strchr("<>=!+-*/%^&|~,", s[i])) i++;
    return i;
}

char *vt_demangled_name(const char *sig)
{
    size_t n = strlen(sig);
    /* trailing " [clone .cold]" and qualifiers */
    for (;;) {
        while (n && sig[n - 1] == ' ') n--;
        if (n && sig[n - 1] == ']') {
            const char *c = NULL;
            for (size_t i = n; i-- > 0;)
                if (sig[i] == '[') { c = sig + i; break; }
            if (c && strncmp(c, "[clone ", 7) == 0) { n = (size_t)(c - sig); continue; }
        }
        if (ends_with(sig, n, " const")) { n -= 6; continue; }
        if (ends_with(sig, n, " volatile")) { n -= 9; continue; }
        if (ends_with(sig, n, " &&")) { n -= 3; continue; }
        if (ends_with(sig, n, " &")) { n -= 2; continue; }
        if (ends_with(sig, n, " noexcept")) { n -= 9; continue; }
        break;
    }
    /* the parameter list: the ')' at the end and its matching '(' */
    if (n && sig[n - 1] == ')') {
        int depth = 0;
        for (size_t i = n; i-- > 0;) {
            if (sig[i] == ')') depth++;
            else if (sig[i] == '(' && --depth == 0) { n = i; break; }
        }
    }
    /* a template function's return type: text before the last space outside
     * brackets; operator names are skipped whole */
    size_t start = 0, i = 0;
    int depth = 0;
    while (i < n) {
        char c = sig[i];
        if (strncmp(sig + i, "operator", 8) == 0 && (i == 0 || sig[i - 1] == ':' || sig[i - 1] == ' ')) {
            size_t t = operator_tail(sig + i + 8);
            i += 8 + (t > n - i - 8 ? n - i - 8 : t);
            if (i + 1 < n && sig[i] == ' ' && sig[i + 1] == '<') i++;   /* "operator<< <int>" */
            continue;
        }
        if (c == '(' || c == '<' || c == '[' || c == '{') depth++;
        else if ((c == ')' || c == '>' || c == ']' || c == '}') && depth > 0) depth--;
        else if (c == ' ' && depth == 0) start = i + 1;
        i++;
    }
    /* ABI tags ("baz[abi:cxx11]") are not part of what people call the function */
    char *out = vt_xmalloc(n - start + 1);
    size_t o = 0;
    for (size_t k = start; k < n; k++) {
        if (sig[k] == '[' && strncmp(sig + k, "[abi:", 5) == 0) {
            const char *e = memchr(sig + k, ']', n - k);
            if (e) { k = (size_t)(e - sig); continue; }
        }
        out[o++] = sig[k];
    }
    while (o && out[o - 1] == ' ') o--;
    out[o] = 0;
    return out;
}

/* The clone kinds the compilers name a C function's copies with (the first word after
 * the name): GCC's IPA passes, function splitting, LTO privatisation, local aliases,
 * OpenMP outlining, target clones' resolver; Clang's ThinLTO promotion, unique
 * internal names, function specialisation. Any other dotted name (Go's "main.main",
 * Zig's "std.heap.alloc", "_GLOBAL__sub_I_main.cpp") is a name of its own. */
static const char *const vt__clone_kinds[] = {
    "constprop", "isra", "part", "cold", "lto_priv", "localalias", "clone", "_omp_fn",
    "omp_cpyfn", "resolver", "llvm", "__uniq", "specialized",
};

size_t vt_clone_suffix_at(const char *sym)
{
    const char *dot = strchr(sym, '.');
    if (!dot || dot == sym || !dot[1])
        return 0;
    for (const char *c = sym; c < dot; c++)
        if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (c > sym && *c >= '0' && *c <= '9')))
            return 0;
    size_t w = strcspn(dot + 1, ".");
    for (size_t i = 0; i < sizeof vt__clone_kinds / sizeof vt__clone_kinds[0]; i++)
        if (strlen(vt__clone_kinds[i]) == w && memcmp(dot + 1, vt__clone_kinds[i], w) == 0)
            return (size_t)(dot - sym);
    return 0;
}
