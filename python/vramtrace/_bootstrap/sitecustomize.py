"""Start-up of ``vramtrace run --tensors``: this folder is first on PYTHONPATH.

Runs the user's own sitecustomize (the next one on sys.path) first, then, with
VRAMTRACE_TENSORS=1, switches CuPy's and RMM's allocators when they are imported
(vramtrace._tensors). Never raises: a failure is one ``vramtrace:`` line on stderr.
"""
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    mine = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
        import importlib
        importlib.import_module("sitecustomize")   # the user's, if there is one
    except ImportError as e:
        if e.name != "sitecustomize":   # the user's own failed: said as Python says it
            sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                             % (type(e).__name__, e))
    except Exception as e:
        sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n" % (type(e).__name__, e))
    finally:
        sys.path[:] = saved
        if mine is not None:
            sys.modules["sitecustomize"] = mine


def _tensors():
    if os.environ.get("VRAMTRACE_TENSORS") != "1":
        return
    from vramtrace import _tensors
    _tensors.install_hooks()


for _step in (_chain, _tensors):
    try:
        _step()
    except Exception as _e:   # start-up must never stop the program
        sys.stderr.write("vramtrace: start-up (%s): %s\n" % (_step.__name__, _e))
