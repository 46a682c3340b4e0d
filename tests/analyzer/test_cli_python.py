#!/usr/bin/env python3
"""test_cli_python.py - Python frames, annotations, host signals (CTest analyzer_python).

  test_cli_python.py python VRAMTRACE TESTDIR   Python frames: interleaving, titles, --python-only,
                                                check, diff, exports, HTML; PyTorch annotations in
                                                text/HTML; host signals (lenient reading,
                                                ECC/cgroup warnings)
"""
import json
import os
import re
import shutil
import sys
import tempfile

from cli_common import check, run, golden, report_json, main


def site_by_py(rep, fn):
    return [st for p in rep["processes"] for st in p["sites"] if any(f["function"] == fn for f in st["python_frames"])]


def t_python(exe, testdir):
    tr, tc = golden(testdir, "python_train-step"), golden(testdir, "torch_cache-step")
    rep = report_json(exe, tr)
    # interleaved frames: the Python frames replace the eval frame; ctypes/libffi/interpreter frames are not shown
    rb = site_by_py(rep, "remember_batch")
    check(len(rb) == 1, "remember_batch: %d sites" % len(rb))
    if rb:
        names = [f["function"] for f in rb[0]["frames"]]
        check(names[:4] == ["device_alloc", "remember_batch", "main", "<module>"],
              "remember_batch: first frames %r (e2e expect_report looks at the first 4)" % names[:4])
        check(not {"ffi_call", "_PyEval_EvalFrameDefault", "_PyObject_MakeTpCall", "Py_RunMain"} & set(names),
              "interpreter/ctypes frames shown: %r" % names)
        check("__libc_start_main" in names, "a native frame outside the interpreter was dropped: %r" % names)
        nf = [f["function"] for f in rb[0]["native_frames"]]
        check(nf[:4] == [None, None, "ffi_call", None] and nf[6] == "_PyEval_EvalFrameDefault",
              "native_frames (trimmed, glue kept) %r" % nf)
        check(all(f["native_index"] == 6 for f in rb[0]["python_frames"]),
              "native_index not moved with the trimming of cudaMalloc: %r" % rb[0]["python_frames"])
    ids = {st["id"] for p in rep["processes"] for st in p["sites"]}
    check(len(ids) == 4, "python_train: expected 4 distinct site ids, got %r" % ids)
    # --python-only: init_parameters' two native paths merge, bytes and series summed
    po = report_json_args(exe, ["--python-only"], tr)
    ip = site_by_py(po, "init_parameters")
    check(len(ip) == 1 and ip[0]["peak_bytes"] == 128 << 20 and ip[0]["unfreed_at_exit_bytes"] == 128 << 20,
          "--python-only: init_parameters %r" % [(x["peak_bytes"], x["unfreed_at_exit_bytes"]) for x in ip])
    for st in [st for p in po["processes"] for st in p["sites"]]:
        check(all(f["module"] == "python" for f in st["frames"]), "--python-only: native frame in %r" % st["title"])
        check(all(f["native_index"] == -1 for f in st["python_frames"]), "--python-only: native_index kept")
    r = run([exe, "report", "--python-only", tr])
    check(r.returncode == 0 and "train.py:95 in remember_batch" in r.stdout and r.stdout.count("init_parameters") == 2
          and "libc" not in r.stdout, "--python-only text:\n" + r.stdout)
    # torch-like stacks: title skips vramtrace's own frame; a C++ frame between activations stays
    rep = report_json(exe, tc)
    kv = site_by_py(rep, "KVCache.grow")
    check(len(kv) == 1 and kv and kv[0]["title"] == "model.py:12 in KVCache.grow", "KVCache title %r" % [x["title"] for x in kv])
    if kv:
        names = [f["function"] for f in kv[0]["frames"]]
        want = ["c10::cuda::malloc", "torch::autograd::THPVariable::empty", "PeakTracker.sample", "KVCache.grow",
                "torch::nn::Module::call", "Model.forward", "<module>", "__libc_start_main"]
        check(names == want, "KVCache frames %r, expected %r" % (names, want))
    att = site_by_py(rep, "Model.attention")
    if att:
        names = [f["function"] for f in att[0]["frames"]]
        check(names[2:] == ["Model.attention", "Model.forward", "<module>"], "native_index -1 frames not last: %r" % names)
    wk = [st for p in rep["processes"] for st in p["sites"] if not st["python_frames"]]
    check(len(wk) == 1 and "native_frames" not in wk[0] and wk[0]["frames"][0]["function"] == "c10::cuda::malloc",
          "native-only thread: %r" % [(x["title"], list(x)) for x in wk])
    r = run([exe, "report", tc])
    check(re.search(r"\(3 frames inside, innermost c10::cuda::malloc.*\)\n\s+at model.py:12 in KVCache.grow\n", r.stdout),
          "text LEAKS block of KVCache:\n" + r.stdout)
    check(re.search(r"PyTorch allocated 147 MiB, reserved 152 MiB: 5 MiB reserved but not allocated \(max 11 MiB\), "
                    r"inactive split 2 MiB; the driver saw 152 MiB live", r.stdout), "torch line:\n" + r.stdout)
    r = run([exe, "report", "--python-only", tc])
    check("c10::cuda::malloc" in r.stdout and "KVCache.grow" in r.stdout and "Module::call" not in r.stdout,
          "--python-only keeps native-only stacks and drops native frames of Python ones:\n" + r.stdout)
    # check names the Python call site
    r = run([exe, "check", tr])
    check(r.returncode == 1 and re.search(r"FAIL .*leak \+2 MiB/step.*\n\s+at train.py:56 in device_alloc <- train.py:95 in remember_batch",
                                          r.stdout), "check message:\n" + r.stdout)
    tmp = tempfile.mkdtemp()
    try:
        # diff: the same native frames, another Python function, is another site
        new = os.path.join(tmp, "renamed")
        os.mkdir(new)
        f = [x for x in os.listdir(tr) if x.endswith(".jsonl")][0]
        text = open(os.path.join(tr, f)).read().replace('"forward",84', '"forward_v2",84')
        open(os.path.join(new, f), "w").write(text)
        r = run([exe, "diff", tr, new])
        check(re.search(r"new .*\n\s+train.py:56 in device_alloc <- train.py:84 in forward_v2", r.stdout)
              and re.search(r"gone .*\n\s+train.py:56 in device_alloc <- train.py:84 in forward\n", r.stdout)
              and "remember_batch" not in r.stdout, "diff by Python frames:\n" + r.stdout)
        # unknown frames ("?", line 0) and "py": null are read
        recs = [json.loads(l) for l in open(os.path.join(tr, f))]
        stacks = [x for x in recs if x["t"] == "stack"]
        stacks[0]["py"] = None                    # init_a: native only
        stacks[2]["py"][1] = ["?", "?", 0, 7]     # forward's frame: code object gone
        unk = os.path.join(tmp, "unknown.jsonl")
        open(unk, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", "--format", "json", unk])
        check(r.returncode == 0, "'?' frames / null py: %d %s" % (r.returncode, r.stderr))
        if r.returncode == 0:
            j = json.loads(r.stdout)
            fr = [fm for st in j["processes"][0]["sites"] for fm in st["frames"] if fm["module"] == "python" and fm["function"] is None]
            check(len(fr) == 1 and fr[0]["file"] is None and fr[0]["line"] is None, "unknown Python frame: %r" % fr)
            check(sum(1 for st in j["processes"][0]["sites"] if not st["python_frames"]) == 1, "py null not native-only")
        # exports: collapsed (--python-only too) and torch carry the Python frames
        for extra in ([], ["--python-only"]):
            r = run([exe, "export", "--format", "collapsed", "--metric", "peak"] + extra + [tr])
            lines = r.stdout.splitlines()
            check(r.returncode == 0 and any(l.endswith("train.py:95 in remember_batch;train.py:56 in device_alloc %d" % (80 << 20))
                                            for l in lines), "collapsed %r:\n%s" % (extra, r.stdout))
            check(len(lines) == (3 if extra else 4), "collapsed %r: %d lines" % (extra, len(lines)))
            if extra:
                check(all(l.startswith("train.py:114 in <module>;") for l in lines), "collapsed --python-only roots: %r" % lines)
        r = run([exe, "export", "--format", "torch", "--python-only", tr])
        check(r.returncode == 2, "--python-only with torch export accepted")
        import pickle
        out = os.path.join(tmp, "t.pickle")
        r = run([exe, "export", "--format", "torch", "-o", out, tr])
        snap = pickle.loads(open(out, "rb").read()) if r.returncode == 0 else {"segments": []}
        names = {tuple(fm["name"] for fm in sg["frames"][:2]) for sg in snap["segments"]}
        check(("device_alloc", "remember_batch") in names and ("device_alloc", "init_parameters") in names,
              "torch export frames: %r" % names)
        # html: Python frames listed, torch row
        out = os.path.join(tmp, "r.html")
        r = run([exe, "report", "--format", "html", "-o", out, tc])
        html = open(out).read()
        check('<li class="py">model.py:12 in KVCache.grow <span class="mod">/srv/llm/model.py</span>' in html,
              "html lacks the Python frame")
        check("PyTorch allocated 147 MiB, reserved 152 MiB" in html, "html lacks the torch numbers")
        # host signals: read leniently (wrong types are "not known"), warnings in text, JSON and HTML
        he = golden(testdir, "host_ecc-step")
        want = report_json(exe, he)["processes"][0]["host_signals"]["warnings"]
        check(len(want) == 2, "host_ecc warnings %r" % want)
        f = [x for x in os.listdir(he) if x.endswith(".jsonl")][0]
        recs = [json.loads(l) for l in open(os.path.join(he, f))]
        snaps = [x for x in recs if x["t"] == "snapshot"]
        snaps[3]["host"] = "junk"
        snaps[4]["host"] = {"rss_bytes": -1, "cgroup": [1], "nvml": {"devices": {"x": 1}}}
        snaps[6]["host"]["nvml"]["devices"][0]["ecc_volatile_corrected"] = {"v": 99}
        snaps[7]["host"]["nvml"]["devices"].append({"uuid": 5, "index": "x"})
        odd = os.path.join(tmp, "odd_host.jsonl")
        open(odd, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", "--format", "json", odd])
        check(r.returncode == 0 and json.loads(r.stdout)["processes"][0]["host_signals"]["warnings"] == want,
              "lenient host: %d %s" % (r.returncode, r.stderr or r.stdout[-2000:]))
        r = run([exe, "report", he])
        check(all("warning: " + w in r.stdout for w in want) and "NVML: 1 GiB of 16 GiB used on the GPU" in r.stdout,
              "text host warnings:\n" + r.stdout)
        check("(largest sample 556 MiB)" in r.stdout and "fell between samples" not in r.stdout,
              "NVML samples above the peak:\n" + r.stdout)
        # NVML samples all below the tracked peak (a peak between two samples): said so
        recs = [json.loads(l) for l in open(os.path.join(he, f))]
        for x in recs:
            nv = x.get("host", {}).get("nvml") if isinstance(x.get("host"), dict) else None
            for d in nv.get("devices", []) if isinstance(nv, dict) else []:
                if isinstance(d, dict) and d.get("process_used_bytes") is not None:
                    d["process_used_bytes"] = 100 * 1024 * 1024
        low = os.path.join(tmp, "low_nvml.jsonl")
        open(low, "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in recs))
        r = run([exe, "report", low])
        check(r.returncode == 0 and "by this process (largest sample 100 MiB; sampled once per snapshot interval, "
              "below the tracked peak, which fell between samples)" in r.stdout, "NVML below the peak:\n" + r.stdout)
        out = os.path.join(tmp, "h.html")
        run([exe, "report", "--format", "html", "-o", out, he])
        html = open(out).read()
        check('<ul class="bad"><li>GPU 0 (GPU-5c9a' in html and "oom_kill 0 -&gt; 1" in html, "html host warnings")
        out = os.path.join(tmp, "clean.html")
        run([exe, "report", "--format", "html", "-o", out, tr])
        check('<ul class="bad">' not in open(out).read(), "html warns without host signals")
    finally:
        shutil.rmtree(tmp)


def report_json_args(exe, args, path):
    r = run([exe, "report", "--format", "json"] + args + [path])
    return json.loads(r.stdout)


if __name__ == "__main__":
    sys.exit(main({"python": t_python}))
