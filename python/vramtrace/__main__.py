"""``python -m vramtrace ARGS`` and the ``vramtrace`` console script of the platform
wheel: replaces this process with the ``vramtrace`` command the wheel carries
(``vramtrace/_prefix/bin/vramtrace``, which finds its ``libvramtrace.so`` beside it),
with the same arguments, so ``python -m vramtrace run -- python train.py`` is
``vramtrace run -- python train.py``: same exit status, same signal forwarding.

The pure-Python wheel carries no command: then this prints where to get one and
exits with status 2 (the command's status for bad usage).
"""
import os
import sys


def command_path():
    """The path of the carried ``vramtrace`` command (it may not exist)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix", "bin", "vramtrace")


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    exe = command_path()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("vramtrace: this installation of the Python package has no vramtrace command (%s is "
                         "missing: a pure-Python wheel); install the platform wheel (manylinux) or the "
                         "vramtrace package of your distribution\n" % exe)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [exe] + args)
    return 127  # not reached: execv returns only by raising OSError


if __name__ == "__main__":
    sys.exit(main())
