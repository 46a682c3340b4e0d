"""numba_import.py HANDLE_HEX: the second process of numba_client.py. Unpickles the
IpcArrayHandle the first process exported, opens it in this process's context
(cuIpcOpenMemHandle_v2 through Numba's _extras shim), touches it, prints
"child <pid> opened <bytes> first <first byte>" and exits without closing it. A
snapshot right after the open writes the import's stack while Python is alive (the
exit snapshot comes after the interpreter is gone)."""
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numba_client import IPC_BYTES, bind_pre_cuda13_names, vramtrace  # noqa: E402

bind_pre_cuda13_names()
handle = pickle.loads(bytes.fromhex(sys.argv[1]))
arr = handle.open()  # OPEN
assert arr.nbytes == IPC_BYTES, arr.nbytes
first = int(arr[:1].copy_to_host()[0])
vramtrace.snapshot("ipc-open")   # stacks are written while the interpreter can name them
print("child", os.getpid(), "opened", arr.nbytes, "first", first, flush=True)
