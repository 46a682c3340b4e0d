#!/usr/bin/env python3
"""check_install.py prefix|deb|wheel --source SRC --build BUILD [--cmake C] [--cpack C] [--python PY]

The three ways to install vramtrace, each checked the way a user would meet it:
  prefix  `cmake --install` into a temporary prefix: the layout (versioned soname and
          its links, header, pkg-config file, Python helper, monitoring examples, man
          page), `pkg-config --cflags/--libs vramtrace` against it, the installed header
          compiling a client (and -lvramtrace linking it by soname), and the installed
          `vramtrace run` tracing the training-loop example;
  deb     `cpack -G DEB` into a temporary folder, `dpkg-deb -x` into a temporary root
          (no system change): Depends names the package of every NEEDED library of the
          binaries (objdump -p, the owner from dpkg -S) and of every soname the preload
          loads with dlopen (its strings, NVIDIA's own libraries left out), and the
          unpacked `vramtrace run` traces the training-loop example;
  wheel   scripts/build_wheel.py, size at most 15 MiB, the manylinux tag matching the
          highest GLIBC_ symbol version inside, ldd on every carried ELF file finding
          everything inside the wheel or in glibc, `pip install --no-index` into a fresh
          venv, then the venv's `vramtrace run` and `python -m vramtrace run` tracing
          examples/python/train.py.
The traced runs see neither the checkout nor the build folder: they run in a private
mount namespace (unshare -m) where both are covered by an empty tmpfs, with the
program, the simulated CUDA libraries and train.py copied to a temporary folder; for
the wheel, this machine's copies of the libraries the wheel carries (libunwind,
libelf, libzstd, libdw, libjansson, liblzma, libbz2) are covered too (/dev/null bound
over them). Where the namespace cannot be made (no privilege), the run goes ahead
unhidden and says so. In both cases LD_DEBUG=libs shows every library the processes
loaded: none may come from the checkout or the build folder, and the preload and its
dlopen-ed libraries must come from the installed place.
Exit 0 pass, 1 fail (one line per failure), 77 skip (a needed tool is absent).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

SKIP = 77
GLIBC = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
         "libutil.so.1", "libanl.so.1", "libmvec.so.1", "libnsl.so.1", "libthread_db.so.1",
         "ld-linux-x86-64.so.2", "linux-vdso.so.1"}
# the GPU driver's own libraries: come with the NVIDIA driver, never from a package dependency
DRIVER_LIBS = re.compile(r"^lib(cuda|cudart|nvidia-ml)\.so")
# the system copies covered in the wheel run (those the wheel carries and python does not need)
HIDE_SYSTEM = ("libunwind.so.8", "libelf.so.1", "libzstd.so.1", "libdw.so.1", "libjansson.so.4",
               "liblzma.so.5", "libbz2.so.1.0")

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(SKIP)


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(cmd, **kw)


def must(cmd, what, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        print("FAIL: %s: %s exited %d\n%s%s" % (what, " ".join(cmd), r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    return r


def need_tools(*tools):
    for t in tools:
        if not shutil.which(t):
            skip("%s is not installed (scripts/setup.sh installs it)" % t)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.src = os.path.realpath(a.source)
        self.build = os.path.realpath(a.build)
        self.tmp = tempfile.mkdtemp(prefix="vt-install-%s-" % a.mode)
        # folders to cover: the checkout, and the build folder when it is elsewhere
        self.hide = [self.src] + ([self.build] if not (self.build + "/").startswith(self.src + "/") else [])
        self.can_hide = self._probe_hide()
        self.last_loaded = {}

    def _probe_hide(self):
        """True when a private mount namespace can cover the build folder: as root
        (unshare -m), else in a user namespace (unshare -r -m); self.unshare is the prefix."""
        script = 'mount -t tmpfs -o size=1m vt-hidden "$1" && ! test -e "$2"'
        r = None
        for pre in (["unshare", "-m"], ["unshare", "-r", "-m"]):
            if not shutil.which("unshare"):
                break
            self.unshare = pre + ["--propagation", "private"]
            r = run(self.unshare + ["sh", "-c", script, "sh", self.build, os.path.join(self.build, "CMakeCache.txt")])
            if r.returncode == 0:
                break
        if r is None or r.returncode != 0:
            print("NOTE: cannot hide the checkout and build folder here (unshare -m / mount: %s); the traced runs "
                  "see them, and only the LD_DEBUG check shows they were not used"
                  % ("no unshare" if r is None else (r.stderr.strip() or "exit %d" % r.returncode)))
            return False
        return True

    def app(self):
        """Copies the examples and the simulated CUDA libraries out of the build folder."""
        d = os.path.join(self.tmp, "app")
        if not os.path.isdir(d):
            shutil.copytree(os.path.join(self.build, "simcuda"), os.path.join(d, "simcuda"))
            shutil.copy(os.path.join(self.build, "bin", "training_loop"), d)
            shutil.copy(os.path.join(self.src, "examples", "python", "train.py"), d)
        return d

    def hidden(self, cmd, env, hide_system=False, ld_debug=True):
        """Runs cmd with the checkout and build folder covered (when possible), in self.tmp,
        with only env's variables; with ld_debug, LD_DEBUG=libs into self.tmp/lddebug.*
        (replacing the last run's)."""
        if ld_debug:
            env = dict(env, LD_DEBUG="libs", LD_DEBUG_OUTPUT=os.path.join(self.tmp, "lddebug"))
            for f in glob.glob(os.path.join(self.tmp, "lddebug.*")):
                os.remove(f)
        if not self.can_hide:
            return run(cmd, env=env, cwd=self.tmp)
        covers = list(self.hide)
        binds = []
        if hide_system:
            for s in HIDE_SYSTEM:
                p = system_path(s)
                if p:
                    binds.append(os.path.realpath(p))
        script = ('set -e; while [ "$1" != -- ]; do mount -t tmpfs -o size=1m vt-hidden "$1"; shift; done; shift; '
                  'while [ "$1" != -- ]; do mount --bind /dev/null "$1" || echo "vt-hide: not covered: $1" >&2; shift; '
                  'done; shift; exec "$@"')
        full = self.unshare + ["sh", "-c", script, "sh"] + covers + ["--"] + binds + ["--"] + cmd
        r = run(full, env=env, cwd=self.tmp)
        if binds:
            missed = re.findall(r"vt-hide: not covered: (\S+)", r.stderr)
            print("covered system copies: %s" % " ".join(b for b in binds if b not in missed))
            if missed:
                print("NOTE: could not cover %s (mount --bind refused); the LD_DEBUG check still says where each "
                      "library came from" % " ".join(missed))
        return r

    def loaded(self):
        """{pid: [paths]} of the libraries every process of the last hidden() run loaded."""
        out = {}
        for f in glob.glob(os.path.join(self.tmp, "lddebug.*")):
            with open(f, errors="replace") as fh:
                for line in fh:
                    m = re.match(r"\s*(\d+):\s+calling init: (\S+)", line)
                    if m:
                        out.setdefault(m.group(1), []).append(m.group(2))
        return out

    def check_loaded(self, lib_dir, what):
        """No library came from the checkout or build folder; in the process that loaded
        the preload, the preload and its dlopen-ed libraries came from lib_dir."""
        seen = self.last_loaded
        check(seen, "%s: LD_DEBUG recorded nothing" % what)
        lib_dir = os.path.realpath(lib_dir)
        traced = 0
        for pid, paths in seen.items():
            for p in paths:
                rp = os.path.realpath(p)
                check(not any((rp + "/").startswith(h + "/") for h in self.hide),
                      "%s: pid %s loaded %s from the checkout or build folder" % (what, pid, p))
            pre = [p for p in paths if os.path.basename(p).startswith("libvramtrace.so")]
            if not pre:
                continue
            traced += 1
            check(all(os.path.dirname(os.path.realpath(p)) == lib_dir for p in pre),
                  "%s: pid %s preloaded %s, not the installed one in %s" % (what, pid, pre, lib_dir))
            for soname in ("libunwind.so.8", "libzstd.so.1"):
                got = [p for p in paths if os.path.basename(p) == soname]
                if check(got, "%s: pid %s never loaded %s (stacks / compression)" % (what, pid, soname)):
                    print("%s: pid %s: %s from %s" % (what, pid, soname, os.path.dirname(os.path.realpath(got[0]))))
                    if self.a.mode == "wheel":
                        check(os.path.dirname(os.path.realpath(got[0])) == lib_dir,
                              "%s: %s came from %s, not the wheel's copy" % (what, soname, got[0]))
        check(traced >= 1, "%s: no process loaded libvramtrace" % what)

    def trace(self, vt_cmd, env, prog, expect, what, hide_system=False, outname=None):
        """vt_cmd run -o OUT -- prog..., then vt_cmd report --format json OUT, checked with
        tests/e2e/expect_report.py. Returns OUT."""
        out = os.path.join(self.tmp, outname or "out")
        t0 = time.time()
        r = self.hidden(vt_cmd + ["run", "-o", out, "--"] + prog, env, hide_system)
        self.last_loaded = self.loaded()
        print("%s: exit %d in %.1f s%s" % (what, r.returncode, time.time() - t0,
                                            " (checkout and build folder hidden)" if self.can_hide else ""))
        if not check(r.returncode == 0, "%s: `vramtrace run` exited %d:\n%s%s" % (what, r.returncode, r.stdout,
                                                                                 r.stderr)):
            return out
        rep = self.hidden(vt_cmd + ["report", "--format", "json", out], env, ld_debug=False)
        if not check(rep.returncode == 0, "%s: report exited %d: %s" % (what, rep.returncode, rep.stderr)):
            return out
        with open(out + ".json", "w") as f:
            f.write(rep.stdout)
        e = run([sys.executable, os.path.join(self.src, "tests", "e2e", "expect_report.py"), out + ".json"] + expect)
        check(e.returncode == 0, "%s: expectations: %s%s" % (what, e.stdout, e.stderr))
        return out


def system_path(soname):
    r = run(["/sbin/ldconfig", "-p"])
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) == soname and "x86-64" in m.group(2):
            return m.group(3)
    return None


def needed(path):
    r = must(["objdump", "-p", path], "objdump")
    return re.findall(r"^\s*NEEDED\s+(\S+)", r.stdout, re.M)


def dlopened(path):
    """The sonames the preload names in its strings (dlopen by soname), less its own,
    glibc's and the GPU driver's."""
    with open(path, "rb") as f:
        data = f.read()
    names = set(m.decode() for m in re.findall(rb"(?<![\w.+-])(lib[A-Za-z0-9_+-]+\.so\.[0-9]+)(?=\x00)", data))
    return sorted(n for n in names if n not in GLIBC and not n.startswith("libvramtrace") and not DRIVER_LIBS.match(n))


TRAIN_LOOP_EXPECT = ["--leak", "remember_batch:3145728", "--leaks", "1", "--not-leak", "forward_backward"]
TRAIN_PY_EXPECT = ["--leak", "remember_batch:2097152", "--leaks", "1", "--not-leak", "forward"]


# ---------------------------------------------------------------- prefix
def mode_prefix(c):
    need_tools("pkg-config", "objdump", "cc")
    p = os.path.join(c.tmp, "prefix")
    t0 = time.time()
    must([c.a.cmake, "--install", c.build, "--prefix", p], "cmake --install")
    print("cmake --install: %.1f s" % (time.time() - t0))
    lib = os.path.join(p, "lib")
    real = glob.glob(os.path.join(lib, "libvramtrace.so.*.*.*"))
    if check(len(real) == 1, "lib/libvramtrace.so.N.M.P: %r" % real):
        m = re.match(r"libvramtrace\.so\.(\d+)\.\d+\.\d+$", os.path.basename(real[0]))
        so = "libvramtrace.so." + m.group(1)
        check(os.readlink(os.path.join(lib, so)) == os.path.basename(real[0]),
              "%s does not point to %s" % (so, real[0]))
        check(os.readlink(os.path.join(lib, "libvramtrace.so")) == so, "libvramtrace.so does not point to " + so)
        sn = re.findall(r"SONAME\s+(\S+)", must(["objdump", "-p", real[0]], "objdump").stdout)
        check(sn == [so], "SONAME %r, wanted %s" % (sn, so))
        print("library: %s (SONAME %s), %d bytes" % (os.path.basename(real[0]), so, os.path.getsize(real[0])))
    for f in ("bin/vramtrace", "include/vramtrace.h", "lib/pkgconfig/vramtrace.pc",
              "share/vramtrace/python/vramtrace/__init__.py",
              "share/vramtrace/python/vramtrace/_bootstrap/sitecustomize.py",
              "share/vramtrace/monitoring/vramtrace-alerts.yml",
              "share/vramtrace/monitoring/vramtrace-dashboard.json",
              "share/vramtrace/container/Dockerfile", "share/man/man1/vramtrace.1"):
        check(os.path.isfile(os.path.join(p, f)), "not installed: " + f)
    check(not glob.glob(os.path.join(p, "share/vramtrace/python/**/__pycache__"), recursive=True),
          "__pycache__ installed")
    # the man page: renders without warnings and carries the command's usage
    if shutil.which("man"):
        r = run(["man", "--warnings", "-l", os.path.join(p, "share/man/man1/vramtrace.1")],
                env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="0"))
        check(r.returncode == 0 and not r.stderr.strip(), "man -l: %d %s" % (r.returncode, r.stderr))
        helptext = must([os.path.join(p, "bin/vramtrace"), "--help"], "--help").stdout
        page = re.sub(r"\s+", " ", re.sub(r".\x08", "", r.stdout))
        check(all(re.sub(r"\s+", " ", l).strip() in page for l in helptext.splitlines() if l.strip()),
              "the man page lacks lines of `vramtrace --help`")
    else:
        print("NOTE: no man here; the page was not rendered")
    # pkg-config against the prefix
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"))
    cflags = must(["pkg-config", "--cflags", "vramtrace"], "pkg-config --cflags", env=env).stdout.split()
    ver = must(["pkg-config", "--modversion", "vramtrace"], "pkg-config --modversion", env=env).stdout.strip()
    libs = must(["pkg-config", "--libs", "vramtrace"], "pkg-config --libs", env=env).stdout.split()
    libdir = must(["pkg-config", "--variable=libdir", "vramtrace"], "pkg-config", env=env).stdout.strip()
    print("pkg-config: --cflags %s --modversion %s --libs %r libdir %s" % (" ".join(cflags), ver, libs, libdir))
    incs = [os.path.realpath(f[2:]) for f in cflags if f.startswith("-I")]
    check(incs == [os.path.realpath(os.path.join(p, "include"))], "--cflags %r does not name %s/include" % (cflags, p))
    check(os.path.realpath(libdir) == os.path.realpath(lib), "libdir %s" % libdir)
    check(re.match(r"^\d+\.\d+\.\d+$", ver), "--modversion %r" % ver)
    # a client program: the header alone (no library at link time), then linked by soname
    src = os.path.join(c.tmp, "client.c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include "vramtrace.h"\n'
                'int main(void) { vramtrace_step(); printf("live %llu\\n", '
                '(unsigned long long)vramtrace_live_bytes(-1)); return 0; }\n')
    exe = os.path.join(c.tmp, "client")
    r = c.hidden(["cc", "-Wall", "-Werror"] + cflags + [src, "-o", exe] + libs, {"PATH": os.environ["PATH"]})
    if check(r.returncode == 0, "client with the installed header: %s" % r.stderr):
        r = run([exe])
        check(r.returncode == 0 and r.stdout == "live 0\n", "client without the library: %d %r" % (r.returncode,
                                                                                                   r.stdout))
        print("client compiled with the installed vramtrace.h: %s" % r.stdout.strip())
    exe2 = os.path.join(c.tmp, "client_linked")
    r = c.hidden(["cc"] + cflags + [src, "-o", exe2, "-L" + lib, "-lvramtrace"], {"PATH": os.environ["PATH"]})
    if check(r.returncode == 0, "client linked with -lvramtrace: %s" % r.stderr):
        n = needed(exe2)
        check("libvramtrace.so.0" in n or any(x.startswith("libvramtrace.so.") for x in n),
              "the linked client needs %r, not the versioned soname" % n)
        print("client linked with -lvramtrace needs %s" % [x for x in n if "vramtrace" in x])
    # the installed command traces the training-loop example
    app = c.app()
    env = {"PATH": os.path.join(p, "bin") + ":/usr/bin:/bin", "LD_LIBRARY_PATH": os.path.join(app, "simcuda")}
    c.trace([os.path.join(p, "bin", "vramtrace")], env, [os.path.join(app, "training_loop"), "40"],
            TRAIN_LOOP_EXPECT, "installed vramtrace run training_loop")
    c.check_loaded(lib, "installed")
    # run --tensors finds the installed Python helper (share/vramtrace/python)
    r = c.hidden([os.path.join(p, "bin", "vramtrace"), "run", "--tensors", "-o", os.path.join(c.tmp, "out_t"),
                  "--", "true"], env, ld_debug=False)
    helper = os.path.join(os.path.realpath(p), "share", "vramtrace", "python")
    pp = re.findall(r"--tensors: PYTHONPATH=(\S+)", r.stderr)
    check(r.returncode == 0 and pp and pp[0].split(":")[:2] == [os.path.join(helper, "vramtrace", "_bootstrap"), helper],
          "run --tensors from the prefix: %d, PYTHONPATH %r (wanted %s)" % (r.returncode, pp, helper))
    print("run --tensors from the prefix: PYTHONPATH=%s" % (pp[0] if pp else None))


# ---------------------------------------------------------------- deb
def mode_deb(c):
    need_tools("dpkg-deb", "dpkg-shlibdeps", "objdump", "dpkg")
    pkg = os.path.join(c.tmp, "pkg")
    t0 = time.time()
    must([c.a.cpack, "-G", "DEB", "-B", pkg, "--config", os.path.join(c.build, "CPackConfig.cmake")], "cpack",
         cwd=c.build)
    debs = glob.glob(os.path.join(pkg, "*.deb"))
    if not check(len(debs) == 1, "cpack made %r" % debs):
        return
    deb = debs[0]
    print("cpack -G DEB: %s, %d bytes, %.1f s" % (os.path.basename(deb), os.path.getsize(deb), time.time() - t0))
    depends = must(["dpkg-deb", "-f", deb, "Depends"], "dpkg-deb -f").stdout.strip()
    print("Depends: %s" % depends)
    dep_names = {re.split(r"[\s(]", d.strip())[0] for alt in depends.split(",") for d in alt.split("|")}
    root = os.path.join(c.tmp, "root")
    must(["dpkg-deb", "-x", deb, root], "dpkg-deb -x")
    files = must(["dpkg-deb", "-c", deb], "dpkg-deb -c").stdout
    print("contents:\n" + "\n".join("  " + l.split()[-1] if "->" not in l else "  " + " ".join(l.split()[-3:])
                                    for l in files.splitlines()))
    exe = os.path.join(root, "usr", "bin", "vramtrace")
    libs = glob.glob(os.path.join(root, "usr", "lib*", "**", "libvramtrace.so.*.*.*"), recursive=True)
    if not (check(os.path.isfile(exe), "no usr/bin/vramtrace") and check(len(libs) == 1, "libs %r" % libs)):
        return
    lib = libs[0]
    # every NEEDED library of both binaries, and every soname the preload dlopens
    want = {}
    for b in (exe, lib):
        for n in needed(b):
            want[n] = "NEEDED by " + os.path.basename(b)
    dl = dlopened(lib)
    check(set(dl) >= {"libunwind.so.8", "libelf.so.1", "libzstd.so.1"}, "dlopen-ed sonames found: %r" % dl)
    for n in dl:
        want.setdefault(n, "dlopen-ed by the preload")
    for soname, why in sorted(want.items()):
        path = system_path(soname)
        if not check(path, "%s (%s): not on this machine" % (soname, why)):
            continue
        r = run(["dpkg", "-S", os.path.realpath(path)])
        if r.returncode != 0:
            r = run(["dpkg", "-S", path])
        owner = r.stdout.split(":")[0].strip() if r.returncode == 0 else None
        if check(owner, "%s: no Debian package owns %s" % (soname, path)):
            check(owner in dep_names, "%s (%s) is in package %s, which Depends lacks" % (soname, why, owner))
            print("  %-20s %-26s -> %s" % (soname, why, owner))
    for d in ("libunwind8", "libelf1", "libzstd1", "libc6"):
        check(d in dep_names, "Depends lacks %s" % d)
    app = c.app()
    env = {"PATH": os.path.join(root, "usr", "bin") + ":/usr/bin:/bin",
           "LD_LIBRARY_PATH": os.path.join(app, "simcuda")}
    c.trace([exe], env, [os.path.join(app, "training_loop"), "40"], TRAIN_LOOP_EXPECT,
            "unpacked .deb vramtrace run training_loop")
    c.check_loaded(os.path.dirname(lib), "deb")


# ---------------------------------------------------------------- wheel
def mode_wheel(c):
    need_tools("objdump", "ldd", "patchelf")
    py = c.a.python
    if run([py, "-c", "import ensurepip, venv"]).returncode != 0:
        skip("%s has no venv/ensurepip (Debian: python3-venv)" % py)
    wdir = os.path.join(c.tmp, "wheel")
    t0 = time.time()
    r = run([sys.executable, os.path.join(c.src, "scripts", "build_wheel.py"), "--build", c.build, "--out", wdir,
             "--cmake", c.a.cmake])
    if r.returncode == SKIP:
        skip(r.stderr.strip())
    if not check(r.returncode == 0, "build_wheel.py: %s%s" % (r.stdout, r.stderr)):
        return
    print(r.stdout.strip())
    print("build_wheel.py: %.1f s" % (time.time() - t0))
    whls = glob.glob(os.path.join(wdir, "*.whl"))
    if not check(len(whls) == 1, "wheels %r" % whls):
        return
    whl = whls[0]
    size = os.path.getsize(whl)
    print("wheel size: %d bytes (%.2f MiB; budget 15 MiB)" % (size, size / 1048576.0))
    check(size <= 15 * 1048576, "the wheel is %d bytes, over 15 MiB" % size)
    m = re.match(r"vramtrace-[\d.]+-py3-none-manylinux_(\d+)_(\d+)_x86_64\.whl$", os.path.basename(whl))
    if not check(m, "wheel name %s: not py3-none-manylinux_2_NN_x86_64" % os.path.basename(whl)):
        return
    unz = os.path.join(c.tmp, "unzipped")
    with zipfile.ZipFile(whl) as z:
        z.extractall(unz)
        names = z.namelist()
        for n in ("vramtrace/_prefix/bin/vramtrace", "vramtrace/_prefix/lib/libvramtrace.so", "vramtrace/__main__.py",
                  "vramtrace/pytest_plugin.py"):
            check(n in names, "the wheel lacks " + n)
        eps = z.read([n for n in names if n.endswith("dist-info/entry_points.txt")][0]).decode()
        check("[console_scripts]\nvramtrace = vramtrace.__main__:main" in eps, "no console script: %r" % eps)
        wheel_meta = z.read([n for n in names if n.endswith("dist-info/WHEEL")][0]).decode()
        check("Root-Is-Purelib: false" in wheel_meta, "WHEEL: %r" % wheel_meta)
    pdir = os.path.join(unz, "vramtrace", "_prefix")
    libdir = os.path.join(pdir, "lib")
    elfs = [os.path.join(pdir, "bin", "vramtrace")] + sorted(glob.glob(os.path.join(libdir, "*")))
    os.chmod(elfs[0], 0o755)
    hi = (2, 0)
    for e in elfs:
        for v in re.findall(r"GLIBC_(\d+)\.(\d+)", must(["objdump", "-T", e], "objdump -T").stdout):
            hi = max(hi, (int(v[0]), int(v[1])))
    check((int(m.group(1)), int(m.group(2))) == hi, "tag %s.%s, highest GLIBC_ needed %d.%d"
          % (m.group(1), m.group(2), hi[0], hi[1]))
    # ldd: everything inside the wheel or glibc; the dlopen-ed sonames carried
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    for e in elfs:
        out = must(["ldd", e], "ldd", env=env).stdout
        for line in out.splitlines():
            mm = re.match(r"\s*(\S+)\s+=>\s+(not found|\S+)", line)
            if not mm:
                continue
            so, where = mm.group(1), mm.group(2)
            inside = where != "not found" and os.path.dirname(os.path.realpath(where)) == os.path.realpath(libdir)
            check(inside or so in GLIBC, "ldd %s: %s => %s (neither in the wheel nor glibc)"
                  % (os.path.relpath(e, unz), so, where))
    dl = dlopened(os.path.join(libdir, "libvramtrace.so"))
    for so in dl:
        check(os.path.isfile(os.path.join(libdir, so)), "the preload dlopens %s, which the wheel lacks" % so)
    rp = must(["patchelf", "--print-rpath", os.path.join(libdir, "libvramtrace.so")], "patchelf").stdout.strip()
    check(rp == "$ORIGIN", "libvramtrace.so run path %r" % rp)
    print("ldd: every library of %d ELF files is in the wheel or glibc; dlopen-ed: %s" % (len(elfs), " ".join(dl)))
    # a fresh venv, offline
    venv = os.path.join(c.tmp, "venv")
    t0 = time.time()
    must([py, "-m", "venv", venv], "venv")
    t1 = time.time()
    must([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-index", "--disable-pip-version-check", whl],
         "pip install --no-index", env=dict(env, PIP_NO_CACHE_DIR="1"))
    print("venv: %.1f s, pip install --no-index: %.1f s" % (t1 - t0, time.time() - t1))
    app = c.app()
    venv_lib = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "vramtrace", "_prefix", "lib"))
    if not check(len(venv_lib) == 1, "installed _prefix/lib %r" % venv_lib):
        return
    env = {"PATH": os.path.join(venv, "bin") + ":/usr/bin:/bin", "LD_LIBRARY_PATH": os.path.join(app, "simcuda")}
    vpy = os.path.join(venv, "bin", "python")
    c.trace([os.path.join(venv, "bin", "vramtrace")], env, [vpy, os.path.join(app, "train.py"), "--steps", "40"],
            TRAIN_PY_EXPECT, "venv vramtrace run train.py", hide_system=True)
    c.check_loaded(venv_lib[0], "wheel (console script)")
    c.trace([vpy, "-m", "vramtrace"], env, ["python", os.path.join(app, "train.py"), "--steps", "40"],
            TRAIN_PY_EXPECT, "python -m vramtrace run train.py", hide_system=True, outname="out_m")
    c.check_loaded(venv_lib[0], "wheel (python -m)")
    # run --tensors finds the Python helper of the wheel (site-packages), not the checkout's
    r = c.hidden([os.path.join(venv, "bin", "vramtrace"), "run", "--tensors", "-o", os.path.join(c.tmp, "out_t"),
                  "--", "true"], env, ld_debug=False)
    pkg = os.path.dirname(os.path.dirname(venv_lib[0].rstrip("/")))   # site-packages/vramtrace
    pp = re.findall(r"--tensors: PYTHONPATH=(\S+)", r.stderr)
    check(r.returncode == 0 and pp and pp[0].split(":")[:2] == [os.path.join(pkg, "_bootstrap"), os.path.dirname(pkg)],
          "run --tensors from the wheel: %d, PYTHONPATH %r (wanted the venv's site-packages)" % (r.returncode, pp))
    print("run --tensors from the wheel: PYTHONPATH=%s" % (pp[0] if pp else None))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("prefix", "deb", "wheel"))
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cpack", default="cpack")
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter of the fresh venv")
    a = ap.parse_args()
    c = Ctx(a)
    t0 = time.time()
    try:
        {"prefix": mode_prefix, "deb": mode_deb, "wheel": mode_wheel}[a.mode](c)
    finally:
        if failures:
            print("kept for inspection: %s" % c.tmp)
        else:
            shutil.rmtree(c.tmp, ignore_errors=True)
    print("install_%s: %s in %.1f s" % (a.mode, "FAIL (%d)" % len(failures) if failures else "ok", time.time() - t0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
