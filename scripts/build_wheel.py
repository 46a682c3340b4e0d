#!/usr/bin/env python3
"""build_wheel.py --build BUILD --out DIR: the platform wheel of vramtrace.

Design: the wheel is the Python package (python/) plus a small install prefix
``vramtrace/_prefix/{bin,lib}`` holding the ``vramtrace`` command, ``libvramtrace.so``
and every library they need except glibc's, the way auditwheel repairs wheels:
  1. ``cmake --install BUILD --prefix STAGE`` (the command and the library, stripped
     of debug sections);
  2. the non-glibc libraries of both (``ldd``, transitively) and the libraries the
     preload loads with dlopen by soname (DLOPENED, and theirs) are copied into lib/
     under their sonames; run paths set with patchelf: ``$ORIGIN/../lib`` on the
     command, ``$ORIGIN`` on every library. glibc's dlopen searches the DT_RUNPATH of
     the object that calls it, so the preload's dlopen("libzstd.so.1") finds the
     copy beside it (and that copy's own needs beside it) before the system's;
  3. the tag ``manylinux_2_NN_<arch>``: NN the highest GLIBC_2.NN symbol version any
     of those files needs (``objdump -T``), so pip installs it only where glibc is at
     least that new;
  4. python/build_backend (the project's PEP 517 backend) writes the wheel with the
     settings prefix=STAGE, plat=TAG.
Prints the wheel's path, tag and size. Needs cmake, ldd, objdump, strip, patchelf.
Exit status 0, or 1 with a line saying what failed (77 when a needed tool is absent).
"""
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# glibc's own libraries: every glibc system has them, and a copy must never be used
GLIBC = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
         "libutil.so.1", "libanl.so.1", "libmvec.so.1", "libnsl.so.1", "libBrokenLocale.so.1",
         "libthread_db.so.1", "libc_malloc_debug.so.0", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1",
         "linux-vdso.so.1"}
# loaded by the preload with dlopen (preload/sys/vt_dlib.h users): invisible to ldd
DLOPENED = ("libunwind.so.8", "libelf.so.1", "libzstd.so.1")
TOOLS = ("ldd", "objdump", "strip", "patchelf")


def die(msg, code=1):
    print("build_wheel: " + msg, file=sys.stderr)
    sys.exit(code)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        die("%s failed (%d): %s" % (" ".join(cmd), r.returncode, (r.stderr or r.stdout).strip()[-2000:]))
    return r.stdout


def ldd(path):
    """{soname: resolved path or None} of everything ldd lists for path."""
    out = {}
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    env.pop("LD_PRELOAD", None)
    for line in run(["ldd", path], env=env).splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(not found|\S+)", line)
        if m:
            out[m.group(1)] = None if m.group(2) == "not found" else m.group(2)
        else:
            m = re.match(r"\s*(\S+)\s+\(0x", line)
            if m:
                out[os.path.basename(m.group(1))] = m.group(1)
    return out


def system_path(soname):
    """Where the dynamic loader finds soname on this machine (ldconfig's cache)."""
    arch = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine(), "")
    for line in run(["/sbin/ldconfig", "-p"]).splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) == soname and arch in m.group(2):
            return m.group(3)
    die("%s: not installed here (needed in the wheel)" % soname)


def glibc_max(paths):
    best = (2, 17)
    for p in paths:
        for v in re.findall(r"GLIBC_(\d+)\.(\d+)", run(["objdump", "-T", p])):
            best = max(best, (int(v[0]), int(v[1])))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the CMake build folder (built)")
    ap.add_argument("--out", required=True, help="folder for the .whl")
    ap.add_argument("--cmake", default=shutil.which("cmake") or "cmake")
    ap.add_argument("--keep", help="keep the staged prefix in this folder")
    a = ap.parse_args()
    for t in TOOLS:
        if not shutil.which(t):
            die("%s is not installed (Debian: %s)" % (t, "patchelf" if t == "patchelf" else "binutils, libc-bin"),
                77)
    tmp = tempfile.mkdtemp(prefix="vt-wheel-")
    try:
        inst = os.path.join(tmp, "install")
        run([a.cmake, "--install", a.build, "--prefix", inst])
        stage = a.keep or os.path.join(tmp, "stage")
        shutil.rmtree(stage, ignore_errors=True)
        os.makedirs(os.path.join(stage, "bin"))
        os.makedirs(os.path.join(stage, "lib"))
        exe = os.path.join(stage, "bin", "vramtrace")
        shutil.copy(os.path.join(inst, "bin", "vramtrace"), exe)
        libdir = [d for d in ("lib", "lib64", "lib/" + platform.machine() + "-linux-gnu")
                  if os.path.exists(os.path.join(inst, d, "libvramtrace.so"))]
        if not libdir:
            die("no libvramtrace.so in %s" % inst)
        pre = os.path.join(stage, "lib", "libvramtrace.so")
        shutil.copy(os.path.realpath(os.path.join(inst, libdir[0], "libvramtrace.so")), pre)
        for p in (exe, pre):
            run(["strip", "--strip-debug", p])
        # the libraries to carry: soname -> system path
        carry, pending = {}, [exe, pre] + [system_path(s) for s in DLOPENED]
        for s in DLOPENED:
            carry[s] = system_path(s)
        while pending:
            for soname, path in ldd(pending.pop()).items():
                if soname in GLIBC or soname in carry or soname.startswith("libvramtrace"):
                    continue
                if path is None:
                    die("%s: not found by ldd" % soname)
                carry[soname] = path
                pending.append(path)
        for soname, path in sorted(carry.items()):
            dst = os.path.join(stage, "lib", soname)
            shutil.copy(os.path.realpath(path), dst)
            os.chmod(dst, 0o755)
            run(["patchelf", "--set-rpath", "$ORIGIN", dst])
        run(["patchelf", "--set-rpath", "$ORIGIN", pre])
        run(["patchelf", "--set-rpath", "$ORIGIN/../lib", exe])
        elfs = [exe] + [os.path.join(stage, "lib", f) for f in sorted(os.listdir(os.path.join(stage, "lib")))]
        major, minor = glibc_max(elfs)
        tag = "manylinux_%d_%d_%s" % (major, minor, platform.machine())
        sys.path.insert(0, os.path.join(ROOT, "python", "build_backend"))
        import vramtrace_build
        os.makedirs(a.out, exist_ok=True)
        name = vramtrace_build.build_wheel(a.out, {"prefix": stage, "plat": tag})
        path = os.path.join(a.out, name)
        size = os.path.getsize(path)
        print("wheel: %s" % path)
        print("tag: %s (highest glibc symbol version needed: GLIBC_%d.%d)" % (tag, major, minor))
        print("carried libraries: %s" % " ".join(sorted(carry)))
        print("size: %d bytes (%.2f MiB)" % (size, size / 1048576.0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
