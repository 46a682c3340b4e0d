"""The Python API in a real process under libvramtrace.so on the simulated device."""
import glob
import json
import subprocess
import sys

SCRIPT = r'''
import json, sys, types
import vramtrace
from cudahelper import alloc, free, MiB

out = {"enabled": vramtrace.enabled()}
a = alloc(1 * MiB)
out["live_after_1MiB"] = vramtrace.live_bytes()
out["live_dev0"] = vramtrace.live_bytes(0)
with vramtrace.scope() as s:
    b = alloc(3 * MiB)
    c = alloc(2 * MiB)
    free(c)
    free(a)                       # allocated before the scope: not the scope's
    try:
        with vramtrace.scope():
            pass
    except RuntimeError:
        out["nested_refused"] = True
out["scope_leaked"] = s.leaked_bytes
out["peak"] = vramtrace.peak_bytes()
# what was live at the peak: a 4 MiB buffer that lives only here makes it
big = alloc(4 * MiB)
free(big)
pk = vramtrace.peak()
out["peak_comp"] = [pk.peak_bytes, pk.step, [s[1] for s in pk.sites], [type(s[0]).__name__ for s in pk.sites]]
out["peak_comp_dev0"] = vramtrace.peak(0).peak_bytes
out["snapshot_rc"] = vramtrace.snapshot("python says hi")

# A fake torch, as if the program had imported PyTorch with CUDA up.
stats = {"allocated_bytes.all.current": 5 * MiB, "reserved_bytes.all.current": 8 * MiB,
         "inactive_split_bytes.all.current": 1 * MiB}
torch = types.ModuleType("torch")
torch.cuda = types.SimpleNamespace(is_available=lambda: True, is_initialized=lambda: True,
                                   device_count=lambda: 1, memory_stats=lambda d: stats)
sys.modules["torch"] = torch
for i in range(3):
    t = alloc(1 * MiB)
    free(t)
    vramtrace.step()
out["has_annotate"] = vramtrace._native.has("vramtrace_annotate")
free(b)
print(json.dumps(out))
'''


def run_script(tmp_path, env):
    (tmp_path / "cudahelper.py").write_text(__import__("conftest").CUDA_HELPER)
    (tmp_path / "script.py").write_text(SCRIPT)
    proc = subprocess.run([sys.executable, "script.py"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc


def records(tmp_path):
    """The file's records, a version 4 delta record's left-out keys restored
    (vramtrace.snapshots.decode_records)."""
    from vramtrace import snapshots
    files = glob.glob(str(tmp_path / "vt-out" / "vt.*.jsonl"))
    assert len(files) == 1, files
    with open(files[0]) as f:
        return snapshots.decode_records([json.loads(line) for line in f], files[0])


def test_api_under_the_tracer(tmp_path, traced_env):
    MiB = 1 << 20
    out, _ = run_script(tmp_path, traced_env)
    assert out["enabled"] is True
    assert out["live_after_1MiB"] == 1 * MiB and out["live_dev0"] == 1 * MiB
    assert out["scope_leaked"] == 3 * MiB
    assert out.get("nested_refused") is True
    assert out["peak"] == 6 * MiB          # 1 + 3 + 2 live at once
    assert out["snapshot_rc"] == 0
    # b (3 MiB) and the 4 MiB buffer freed at once: the composition keeps it
    assert out["peak_comp"][0] == 7 * MiB and out["peak_comp"][2] == [4 * MiB, 3 * MiB]
    assert out["peak_comp"][3] == ["int", "int"] and out["peak_comp"][1] == 1
    assert out["peak_comp_dev0"] == 7 * MiB
    snaps = [r for r in records(tmp_path) if r["t"] == "snapshot"]
    manual = [r for r in snaps if r["trigger"] == "manual"]
    assert [r["label"] for r in manual] == ["python says hi"]
    assert sorted(a[1] for a in manual[0]["allocations"]) == [3 * MiB]
    steps = [r for r in snaps if r["trigger"] == "step"]
    assert steps and all(r["step_marked"] for r in steps)
    assert max(r["step"] for r in snaps) >= 2       # three marks counted from 0
    if out["has_annotate"]:
        # With vramtrace_annotate in the library, the torch numbers reach the steps.
        ann = steps[-1].get("annotations") or {}
        assert ann.get("torch.cuda:0.memory_allocated_bytes") == 5 * MiB
        assert ann.get("torch.cuda:0.memory_reserved_bytes") == 8 * MiB
        assert ann.get("torch.cuda:0.inactive_split_bytes") == 1 * MiB


def test_api_without_the_tracer(tmp_path, plain_env):
    out, _ = run_script(tmp_path, plain_env)
    assert out == {"enabled": False, "live_after_1MiB": 0, "live_dev0": 0,
                   "nested_refused": True, "scope_leaked": 0, "peak": 0, "snapshot_rc": 0,
                   "has_annotate": False, "peak_comp": [0, 0, [], []], "peak_comp_dev0": 0}
    assert not (tmp_path / "vt-out").exists()
