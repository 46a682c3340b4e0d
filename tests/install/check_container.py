#!/usr/bin/env python3
"""check_container.py EXAMPLES/CONTAINER: the container examples, checked offline.

What this checks, and what it does not:
  - job.yaml, pvc.yaml: parsed as YAML (PyYAML), then checked against the schema
    written down below (SCHEMA: the subset of Kubernetes' batch/v1 Job and v1
    PersistentVolumeClaim the examples use; an unknown key fails, so a typo in a
    field name is caught), and for consistency: every volumeMount names a volume and
    every volume is mounted, the claim is the one pvc.yaml defines, the snapshot
    folder of `vramtrace run -o` lies on the claim's volume, VRAMTRACE_PROMETHEUS is
    the hostPath volume's mount path, every $(VAR) in the command is defined in env.
    This is not the API server's validation (kubeconform and `kubectl --dry-run`
    need the published schemas or a cluster; neither is reachable here).
  - Dockerfile: split into instructions (continuation lines joined), each a known
    Dockerfile instruction; FROM first (after ARGs); ENTRYPOINT and CMD in JSON form
    that parses; the entrypoint is `vramtrace run ... --`; the files it COPYs are the
    wheel (its pattern matches the name scripts/build_wheel.py gives) and
    examples/python/train.py; its -o folder lies on its VOLUME; its
    VRAMTRACE_PROMETHEUS matches the Job's. With `hadolint` on PATH it also runs it
    (errors fail; Debian has no package of it, so usually it is absent and said so).
Exit 0 pass, 1 fail (a line per failure), 77 when PyYAML is absent.
"""
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)
    return cond


# ---- the schema: {key: type or nested schema}; ("list", item) for lists; a set is an enum
STR, INT, STRMAP = "str", "int", "strmap"
META = {"name": STR, "namespace": STR, "labels": STRMAP, "annotations": STRMAP}
ENV = {"name": STR, "value": STR,
       "valueFrom": {"fieldRef": {"fieldPath": STR, "apiVersion": STR},
                     "secretKeyRef": {"name": STR, "key": STR}, "configMapKeyRef": {"name": STR, "key": STR}}}
CONTAINER = {"name": STR, "image": STR, "command": ("list", STR), "args": ("list", STR),
             "workingDir": STR, "env": ("list", ENV),
             "resources": {"limits": STRMAP, "requests": STRMAP},
             "volumeMounts": ("list", {"name": STR, "mountPath": STR, "readOnly": bool, "subPath": STR})}
VOLUME = {"name": STR,
          "hostPath": {"path": STR, "type": {"", "DirectoryOrCreate", "Directory", "FileOrCreate", "File",
                                             "Socket", "CharDevice", "BlockDevice"}},
          "persistentVolumeClaim": {"claimName": STR, "readOnly": bool},
          "emptyDir": {"medium": STR, "sizeLimit": STR}}
POD_SPEC = {"restartPolicy": {"Never", "OnFailure"},   # a Job's pods may not use Always
            "containers": ("list", CONTAINER), "volumes": ("list", VOLUME),
            "nodeSelector": STRMAP, "serviceAccountName": STR,
            "tolerations": ("list", {"key": STR, "operator": {"Exists", "Equal"}, "value": STR,
                                     "effect": {"NoSchedule", "PreferNoSchedule", "NoExecute"}})}
JOB = {"apiVersion": {"batch/v1"}, "kind": {"Job"}, "metadata": META,
       "spec": {"backoffLimit": INT, "ttlSecondsAfterFinished": INT, "completions": INT, "parallelism": INT,
                "activeDeadlineSeconds": INT, "template": {"metadata": META, "spec": POD_SPEC}}}
PVC = {"apiVersion": {"v1"}, "kind": {"PersistentVolumeClaim"}, "metadata": META,
       "spec": {"accessModes": ("list", {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"}),
                "storageClassName": STR, "resources": {"requests": STRMAP}}}
REQUIRED = {"job": ["apiVersion", "kind", "metadata.name", "spec.template.spec.restartPolicy",
                    "spec.template.spec.containers"],
            "pvc": ["apiVersion", "kind", "metadata.name", "spec.accessModes", "spec.resources.requests.storage"]}
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$")


def validate(doc, schema, where):
    if isinstance(schema, set):
        return check(doc in schema, "%s: %r is not one of %s" % (where, doc, sorted(schema)))
    if schema == STR:
        return check(isinstance(doc, str), "%s: not a string: %r" % (where, doc))
    if schema == INT:
        return check(isinstance(doc, int) and not isinstance(doc, bool) and doc >= 0, "%s: not an integer >= 0" % where)
    if schema is bool:
        return check(isinstance(doc, bool), "%s: not true/false" % where)
    if schema == STRMAP:
        return check(isinstance(doc, dict) and all(isinstance(k, str) and isinstance(v, (str, int))
                                                   for k, v in doc.items()), "%s: not a map of strings" % where)
    if isinstance(schema, tuple):
        if check(isinstance(doc, list) and doc, "%s: not a non-empty list" % where):
            for i, item in enumerate(doc):
                validate(item, schema[1], "%s[%d]" % (where, i))
        return
    if not check(isinstance(doc, dict), "%s: not a map" % where):
        return
    for k, v in doc.items():
        if check(k in schema, "%s: unknown key %r" % (where, k)):
            validate(v, schema[k], "%s.%s" % (where, k))


def get(doc, dotted):
    for k in dotted.split("."):
        if not isinstance(doc, dict) or k not in doc:
            return None
        doc = doc[k]
    return doc


def under(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def check_k8s(yaml, d):
    with open(os.path.join(d, "job.yaml")) as f:
        jobs = [x for x in yaml.safe_load_all(f) if x is not None]
    with open(os.path.join(d, "pvc.yaml")) as f:
        pvcs = [x for x in yaml.safe_load_all(f) if x is not None]
    if not (check(len(jobs) == 1, "job.yaml: %d documents" % len(jobs))
            and check(len(pvcs) == 1, "pvc.yaml: %d documents" % len(pvcs))):
        return {}
    job, pvc = jobs[0], pvcs[0]
    validate(job, JOB, "job.yaml")
    validate(pvc, PVC, "pvc.yaml")
    for name, doc in (("job", job), ("pvc", pvc)):
        for r in REQUIRED[name]:
            check(get(doc, r) is not None, "%s.yaml: %s is required" % (name, r))
        check(DNS_LABEL.match(str(get(doc, "metadata.name"))), "%s.yaml: metadata.name is not a DNS label" % name)
    check(QUANTITY.match(str(get(pvc, "spec.resources.requests.storage"))), "pvc.yaml: storage is not a quantity")
    pod = get(job, "spec.template.spec") or {}
    vols = {v.get("name"): v for v in pod.get("volumes", [])}
    mounted = set()
    facts = {}
    for c in pod.get("containers", []):
        mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
        for n in mounts:
            check(n in vols, "job.yaml: volumeMount %r names no volume" % n)
        mounted |= set(mounts)
        env = {e["name"]: e.get("value") for e in c.get("env", [])}
        cmd = c.get("command", []) + c.get("args", [])
        if check(cmd[:2] == ["vramtrace", "run"] and "--" in cmd, "job.yaml: the command is not `vramtrace run ... --`"):
            for var in re.findall(r"\$\((\w+)\)", " ".join(cmd)):
                check(var in env, "job.yaml: $(%s) in the command is not defined in env" % var)
            if check("-o" in cmd[:cmd.index("--")], "job.yaml: no -o folder"):
                out = cmd[cmd.index("-o") + 1]
                pvc_mounts = [p for n, p in mounts.items()
                              if get(vols.get(n, {}), "persistentVolumeClaim.claimName") == get(pvc, "metadata.name")]
                check(any(under(out, p) for p in pvc_mounts),
                      "job.yaml: the snapshot folder %s is not on the claim %s" % (out, get(pvc, "metadata.name")))
        prom = env.get("VRAMTRACE_PROMETHEUS")
        host_mounts = [p for n, p in mounts.items() if "hostPath" in vols.get(n, {})]
        check(prom and prom in host_mounts, "job.yaml: VRAMTRACE_PROMETHEUS=%r is not a hostPath mount %r"
              % (prom, host_mounts))
        facts["prom"] = prom
    for n, v in vols.items():
        check(n in mounted, "job.yaml: volume %r is never mounted" % n)
    check(any("hostPath" in v for v in vols.values()), "job.yaml: no hostPath volume (node_exporter's textfile)")
    print("job.yaml, pvc.yaml: YAML parsed; schema (the subset written in check_container.py) and cross-references ok")
    return facts


INSTRUCTIONS = {"FROM", "RUN", "CMD", "LABEL", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER",
                "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "MAINTAINER"}


def check_dockerfile(d, src_root, facts):
    path = os.path.join(d, "Dockerfile")
    ins, cur = [], ""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if not cur and (not s.strip() or s.lstrip().startswith("#")):
                continue
            if s.lstrip().startswith("#"):
                continue   # a comment inside a continued instruction
            if s.endswith("\\"):
                cur += s[:-1] + " "
                continue
            cur += s
            ins.append((n, cur.strip()))
            cur = ""
    check(not cur, "Dockerfile: ends inside a continued instruction")
    kinds = []
    for n, text in ins:
        word = text.split(None, 1)[0]
        check(word.upper() in INSTRUCTIONS and word == word.upper(), "Dockerfile:%d: unknown instruction %r" % (n, word))
        kinds.append((n, word.upper(), text.split(None, 1)[1] if " " in text else ""))
    first = [k for k in kinds if k[1] != "ARG"]
    check(first and first[0][1] == "FROM", "Dockerfile: the first instruction after ARG is not FROM")
    js = {}
    for n, k, arg in kinds:
        if k in ("ENTRYPOINT", "CMD"):
            try:
                v = json.loads(arg)
                check(isinstance(v, list) and all(isinstance(x, str) for x in v),
                      "Dockerfile:%d: %s is not a list of strings" % (n, k))
                js[k] = v
            except ValueError as e:
                check(False, "Dockerfile:%d: %s is not JSON (exec form): %s" % (n, k, e))
    ep = js.get("ENTRYPOINT", [])
    if check(ep[:2] == ["vramtrace", "run"] and ep[-1:] == ["--"], "Dockerfile: ENTRYPOINT is not `vramtrace run ... --`"):
        out = ep[ep.index("-o") + 1] if "-o" in ep else None
        vols = [json.loads(a) if a.startswith("[") else a.split() for n, k, a in kinds if k == "VOLUME"]
        vols = [v for group in vols for v in group]
        check(out and any(under(out, v) for v in vols), "Dockerfile: the -o folder %r is not on a VOLUME %r" % (out, vols))
    # what it copies: the wheel, by the name scripts/build_wheel.py gives it, and train.py
    version = re.search(r'^version = "([^"]+)"', open(os.path.join(src_root, "python", "pyproject.toml")).read(), re.M)
    wheel = "vramtrace-%s-py3-none-manylinux_2_36_x86_64.whl" % (version.group(1) if version else "0")
    copies = [a.split()[:-1] for n, k, a in kinds if k == "COPY"]
    srcs = [s for c in copies for s in c if not s.startswith("--")]
    check(any(fnmatch.fnmatch(wheel, s) for s in srcs), "Dockerfile: no COPY matches the wheel's name %s" % wheel)
    for s in srcs:
        if not any(ch in s for ch in "*?["):
            check(os.path.isfile(os.path.join(src_root, "examples", "python", s)),
                  "Dockerfile: COPY %s: no such example in examples/python" % s)
    envs = dict(re.findall(r"(\w+)=(\S+)", " ".join(a for n, k, a in kinds if k == "ENV")))
    if facts.get("prom"):
        check(envs.get("VRAMTRACE_PROMETHEUS") == facts["prom"], "Dockerfile: VRAMTRACE_PROMETHEUS=%r, the Job's is %r"
              % (envs.get("VRAMTRACE_PROMETHEUS"), facts["prom"]))
    print("Dockerfile: %d instructions; syntax and consistency checks (this test's own) ok" % len(ins))
    if shutil.which("hadolint"):
        r = subprocess.run(["hadolint", "--failure-threshold", "error", path], capture_output=True, text=True)
        print(r.stdout.strip())
        check(r.returncode == 0, "hadolint: %d %s" % (r.returncode, r.stderr))
        print("hadolint: ran, exit %d" % r.returncode)
    else:
        print("hadolint: not installed (no Debian package); the Dockerfile was checked by this test's rules only")


def main():
    d = os.path.abspath(sys.argv[1])
    src_root = os.path.dirname(os.path.dirname(d))
    try:
        import yaml
    except ImportError:
        print("SKIP: PyYAML is not installed for %s (Debian: python3-yaml)" % sys.executable)
        return 77
    facts = check_k8s(yaml, d)
    check_dockerfile(d, src_root, facts)
    print("install_container_schema: %s (YAML parse + the project's written-down schema; not kubeconform/"
          "kubectl: no cluster or published schemas offline)" % ("FAIL" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
