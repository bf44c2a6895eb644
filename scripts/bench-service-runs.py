#!/usr/bin/env python3
"""Whole-process time of a short run through `mcpflow service`, for two builds of mcpflow,
alternating, medians and their ratio. Each build gets a service of its own (a temporary
data folder, the echo fixture allowed); the first runs are warm-up.

Usage: python3 scripts/bench-service-runs.py BASELINE_BIN CANDIDATE_BIN [RUNS]
e.g. the build before a change (copied aside) against target/release/mcpflow.
"""
import os, statistics, subprocess, sys, tempfile, time, json, pathlib

repo = pathlib.Path(__file__).resolve().parent.parent
testkit = repo / "target/debug/mcpflow-testkit"
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 40
builds = {"baseline": sys.argv[1], "candidate": sys.argv[2]}
work = pathlib.Path(tempfile.mkdtemp(prefix="mcpflow-bench-"))
(work / "servers.json").write_text(json.dumps({"mcpServers": {"echo": {"command": str(testkit), "args": ["echo"]}}}))
(work / "quick.json").write_text(json.dumps({"blueprint": 1, "id": "quick", "steps": [
    {"id": "hello", "kind": "tool", "server": "echo", "tool": "echo", "args": {"message": "hi"}},
    {"id": "shout", "kind": "transform", "value": "{{ hello }}"}], "output": "{{ shout }}"}))
services = {}
for name, binary in builds.items():
    home = work / name
    home.mkdir(mode=0o700)
    env = dict(os.environ, MCPFLOW_HOME=str(home))
    services[name] = subprocess.Popen([binary, "service", "--allow-all-servers", "--idle", "600", "--servers",
                                       str(work / "servers.json")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# Each service answers on its socket once it holds its store.
for name in builds:
    socket = work / name / "mcpflow.sock"
    deadline = time.monotonic() + 30
    while not socket.exists():
        if time.monotonic() > deadline or services[name].poll() is not None:
            sys.exit(f"{name}: the service did not start")
        time.sleep(0.02)
times = {name: [] for name in builds}
try:
    for i in range(runs + 3):
        for name, binary in builds.items():
            env = dict(os.environ, MCPFLOW_HOME=str(work / name))
            start = time.perf_counter()
            done = subprocess.run([binary, "run", "--store", str(work / "quick.json")], env=env, capture_output=True)
            took = (time.perf_counter() - start) * 1000
            if done.returncode != 0:
                sys.exit(f"{name}: the run failed: {done.stderr.decode()}")
            if i >= 3:
                times[name].append(took)
finally:
    for service in services.values():
        service.terminate()
for name, t in times.items():
    q = statistics.quantiles(t, n=4)
    print(f"{name:9} median {statistics.median(t):6.1f} ms  (p25 {q[0]:.1f}, p75 {q[2]:.1f}, n={len(t)})")
print(f"candidate / baseline (medians): {statistics.median(times['candidate']) / statistics.median(times['baseline']):.2f}")
