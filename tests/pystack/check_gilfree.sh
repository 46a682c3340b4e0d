#!/bin/sh
# check_gilfree.sh <vt_python.c> <libpystack_probe.so>
# The reader may only look up these interpreter names (all GIL-free: data
# symbols, Py_IsInitialized, Py_GetVersion, PyGILState_GetThisThreadState);
# anything else starting with Py/_Py (PyGILState_Ensure, PyEval_*, Py_INCREF
# helpers, PyCode_Addr2Line...) fails. The probe must not link libpython.
src=$1; so=$2
allowed="Py_Version Py_GetVersion Py_IsInitialized _PyRuntime PyGILState_GetThisThreadState PyCode_Type PyFrame_Type PyBytes_Type PyUnicode_Type"
used=$(grep -o '"_\?Py[A-Za-z_]*"' "$src" | tr -d '"' | sort -u)
bad=0
for s in $used; do
  case " $allowed " in *" $s "*) ;; *) echo "FAIL: vt_python.c names $s"; bad=1 ;; esac
done
undef=$(nm -D --undefined-only "$so" | awk '{print $NF}' | grep -E '^_?Py' || true)
[ -z "$undef" ] || { echo "FAIL: probe imports $undef"; bad=1; }
ldd "$so" | grep -q libpython && { echo "FAIL: probe links libpython"; bad=1; }
[ $bad = 0 ] && echo "ok: vt_python.c looks up only: $(echo $used)"
exit $bad
