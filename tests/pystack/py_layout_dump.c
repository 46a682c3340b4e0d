/* py_layout_dump.c — print the CPython structure offsets vt_python.c relies on,
 * computed by the compiler from ONE Python version's own headers.
 *
 * Built by tests/pystack/check_layout.sh once per installed interpreter
 * (cc -DPy_BUILD_CORE -I<prefix>/include/python3.X), never linked into
 * anything.  Output: "key=value" lines, the same keys that probe_layout() in
 * pystack_probe.c prints from the layout vt_python.c selected at run time;
 * the pystack_layout_* tests diff the two, so a wrong hand-written table
 * fails a test instead of reading garbage.
 *
 * Keys (all offsets in bytes from the start of the named struct):
 *   ts_frame        PyThreadState: 3.10 frame, 3.11/3.12 cframe, 3.13+ current_frame
 *   cf_current      _PyCFrame.current_frame (3.11/3.12), -1 otherwise
 *   fr_back fr_code fr_instr fr_owner   frame linkage (PyFrameObject in 3.10,
 *                   _PyInterpreterFrame after); fr_owner -1 in 3.10
 *   fr_is_entry     3.11 _PyInterpreterFrame.is_entry (first frame of an
 *                   eval-loop activation), -1 otherwise
 *   co_*            PyCodeObject fields; co_code (3.10 bytes object) or
 *                   co_code_adaptive (3.11+ inline code units)
 *   bytes_size bytes_sval   PyBytesObject ob_size / ob_sval
 *   str_length str_state str_ascii_size str_compact_size  unicode layouts
 *   st_kind_shift st_compact_bit st_ascii_bit   bit positions inside state
 */
#define PY_SSIZE_T_CLEAN
#ifndef Py_BUILD_CORE
#define Py_BUILD_CORE 1
#endif
#include <Python.h>
#include <frameobject.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define P(k, v) printf("%s=%ld\n", k, (long)(v))

static int bitpos(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n * 8; i++)
        if (b[i / 8] & (1u << (i % 8))) return (int)i;
    return -1;
}

int main(void)
{
    P("version_minor", PY_MINOR_VERSION);
#if PY_VERSION_HEX < 0x030B0000
    P("ts_frame", offsetof(PyThreadState, frame));
    P("cf_current", -1);
    P("fr_back", offsetof(PyFrameObject, f_back));
    P("fr_code", offsetof(PyFrameObject, f_code));
    P("fr_instr", offsetof(PyFrameObject, f_lasti));
    P("fr_owner", -1);
    P("fr_is_entry", -1);
    P("co_name", offsetof(PyCodeObject, co_name));
    P("co_code", offsetof(PyCodeObject, co_code));
    P("co_firsttraceable", -1);
#else
#if PY_VERSION_HEX < 0x030D0000
    P("ts_frame", offsetof(PyThreadState, cframe));
    P("cf_current", offsetof(_PyCFrame, current_frame));
    P("fr_code", offsetof(_PyInterpreterFrame, f_code));
    P("fr_instr", offsetof(_PyInterpreterFrame, prev_instr));
#else
    P("ts_frame", offsetof(PyThreadState, current_frame));
    P("cf_current", -1);
    P("fr_code", offsetof(_PyInterpreterFrame, f_executable));
    P("fr_instr", offsetof(_PyInterpreterFrame, instr_ptr));
#endif
    P("fr_back", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX < 0x030C0000
    P("fr_is_entry", offsetof(_PyInterpreterFrame, is_entry));
#else
    P("fr_is_entry", -1);
#endif
    P("fr_owner", offsetof(_PyInterpreterFrame, owner));
    P("co_name", offsetof(PyCodeObject, co_qualname));
    P("co_code", offsetof(PyCodeObject, co_code_adaptive));
    P("co_firsttraceable", offsetof(PyCodeObject, _co_firsttraceable));
#endif
    P("co_filename", offsetof(PyCodeObject, co_filename));
    P("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    P("co_linetable", offsetof(PyCodeObject, co_linetable));
    P("ob_type", offsetof(PyObject, ob_type));
    P("var_size", offsetof(PyVarObject, ob_size));
    P("bytes_sval", offsetof(PyBytesObject, ob_sval));
    P("str_length", offsetof(PyASCIIObject, length));
    P("str_state", offsetof(PyASCIIObject, state));
    P("str_ascii_size", sizeof(PyASCIIObject));
    P("str_compact_size", sizeof(PyCompactUnicodeObject));
    {
        PyASCIIObject a;
        memset(&a, 0, sizeof a); a.state.kind = 1;
        P("st_kind_shift", bitpos(&a.state, sizeof a.state));
        memset(&a, 0, sizeof a); a.state.compact = 1;
        P("st_compact_bit", bitpos(&a.state, sizeof a.state));
        memset(&a, 0, sizeof a); a.state.ascii = 1;
        P("st_ascii_bit", bitpos(&a.state, sizeof a.state));
    }
    return 0;
}
