/* vt_demangle.h — C++ names for reports: demangling with the C++ runtime's own
 * demangler, and the function's name without its parameter list for matching.
 *
 * nvcc compiles .cu host code as C++, so ELF symbols and the preload's dladdr
 * names come as Itanium C++ ABI mangled names ("_ZL14remember_batchi").
 * vt_demangle turns them into "remember_batch(int)" with __cxa_demangle
 * (libstdc++, the Itanium C++ ABI's "Demangler API"); vt_demangled_name cuts
 * the parameter list, trailing qualifiers, "[clone ...]" suffixes, ABI tags and
 * a template function's return type from that text, giving "remember_batch",
 * "ns::Foo::step", "foo<int>", "Foo::operator()", which is what people and
 * tools match on ("name" or "...::name").
 *
 * Both return a malloc'd string the caller frees, or NULL (not a mangled name,
 * or the demangler failed). Thread-safe (no shared state).
 */
#ifndef VT_DEMANGLE_H
#define VT_DEMANGLE_H

#include <stddef.h>

/* "_ZN2ns3Foo4stepEv" -> "ns::Foo::step()"; NULL unless sym is a valid mangled name. */
char *vt_demangle(const char *sym);

/* A demangled signature -> the qualified function name without parameters:
 * "void foo<int>(int)" -> "foo<int>", "ns::Foo::size() const" -> "ns::Foo::size".
 * A text without a parameter list is returned whole (copied). */
char *vt_demangled_name(const char *signature);

/* A C name with the compiler's clone suffixes (GCC: "hold.constprop.0", ".isra.0",
 * ".part.0", ".cold", ".lto_priv.0", ".localalias"; Clang: ".llvm.123"): the name
 * is the identifier before the first '.' when the word after it is one of the
 * compilers' clone kinds (vt_demangle.c). Returns that length, or 0 when sym has no
 * such suffix (no '.', nothing before it that is an identifier, or another word after
 * it: Go's "main.main"). "hold.constprop.0" -> 4. */
size_t vt_clone_suffix_at(const char *sym);

#endif /* VT_DEMANGLE_H */
