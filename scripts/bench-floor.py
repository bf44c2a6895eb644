#!/usr/bin/env python3
"""Whole-process time and peak RSS of two `mcpflow run`s that should cost little, the rows
of issue 35's table that this script owns, against their goals:

- a 1,000,000-item `for_each` of one transform (`{{ item }}`, collected), the list given
  as an inputs file, under the default limits (goal: succeeds, <= 3 s, <= 200 MB);
- a blueprint with no server, start to exit (goal: <= 5 ms, <= 16 MB).

The cases alternate, round after round (the machine is noisy); each prints its median
wall time (spawned from here) and peak RSS (its ru_maxrss through /usr/bin/time, in
a run of its own), the range of its
times, and the ratio of the medians to the goal (<= 1.00 meets it). The first round is
warm-up. With a second binary, both are measured alternating and the ratio
candidate / baseline is printed as well.

Usage: python3 scripts/bench-floor.py [BIN [BASELINE_BIN]] [--rounds N] [--items N]
       (BIN defaults to target/release/mcpflow: `cargo build --release -p mcpflow-cli --bin mcpflow`)
"""
import argparse, json, os, pathlib, statistics, subprocess, sys, tempfile, time

repo = pathlib.Path(__file__).resolve().parent.parent
parser = argparse.ArgumentParser()
parser.add_argument("bin", nargs="?", default=str(repo / "target/release/mcpflow"))
parser.add_argument("baseline", nargs="?")
parser.add_argument("--rounds", type=int, default=7)
parser.add_argument("--items", type=int, default=1_000_000)
args = parser.parse_args()

work = pathlib.Path(tempfile.mkdtemp(prefix="mcpflow-floor-"))
(work / "home").mkdir(mode=0o700)
(work / "loop.json").write_text(json.dumps({
    "blueprint": 1, "id": "million",
    "inputs": {"type": "object", "properties": {"items": {"type": "array"}}},
    "steps": [{"id": "each", "kind": "loop", "for_each": "{{ inputs.items }}",
               "steps": [{"id": "t", "kind": "transform", "value": "{{ item }}"}]}],
    "output": "{{ each }}"}))
(work / "items.json").write_text(json.dumps({"items": list(range(args.items))}))
(work / "start.json").write_text(json.dumps({
    "blueprint": 1, "id": "no-server", "steps": [{"id": "t", "kind": "transform", "value": "{{ `1` }}"}]}))

# name, arguments, goal seconds, goal MB, what is checked of the envelope
cases = [
    (f"for_each over {args.items:,} items, one transform each",
     ["run", str(work / "loop.json"), "--inputs", str(work / "items.json"), "--json", "-q"], 3.0, 200,
     lambda env: env["status"] == "succeeded" and len(env["output"]) == args.items),
    ("no-server blueprint, start to exit",
     ["run", str(work / "start.json"), "--json", "-q"], 0.005, 16,
     lambda env: env["status"] == "succeeded"),
]
builds = {"mcpflow": args.bin}
if args.baseline:
    builds = {"baseline": args.baseline, "candidate": args.bin}
env = dict(os.environ, MCPFLOW_HOME=str(work / "home"))


def once(binary, argv, check):
    """Wall seconds of one run started from here, and peak RSS (MB) of another started by
    /usr/bin/time: a child's ru_maxrss counts what its parent held before the exec, and
    this script holds the list; `time` is small. Both envelopes are checked."""
    walls = []
    for command in ([binary, *argv], ["/usr/bin/time", "-f", "%M", "-o", str(work / "rss"), binary, *argv]):
        started = time.perf_counter()
        with open(work / "out.json", "wb") as out:
            code = subprocess.call(command, env=env, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        walls.append(time.perf_counter() - started)
        envelope = json.loads((work / "out.json").read_text())
        if not check(envelope):
            sys.exit(f"{binary} {' '.join(argv)}: unexpected result (exit {code}): {json.dumps(envelope)[:400]}")
    return walls[0], int((work / "rss").read_text().split()[-1]) / 1024


samples = {(b, c[0]): [] for b in builds for c in cases}
for round_ in range(args.rounds + 1):
    for name, argv, _, _, check in cases:
        # Turn the order each round: no build always runs first.
        order = list(builds.items()) if round_ % 2 == 0 else list(reversed(builds.items()))
        for build, binary in order:
            sample = once(binary, argv, check)
            if round_ > 0:
                samples[(build, name)].append(sample)

print(f"{args.rounds} alternating rounds after one warm-up; medians (range of the times)")
print(f"| build | case | wall | peak RSS | wall / goal | RSS / goal |")
print(f"|---|---|---|---|---|---|")
medians = {}
for name, _, goal_s, goal_mb, _ in cases:
    for build in builds:
        walls = [w for w, _ in samples[(build, name)]]
        rss = statistics.median(r for _, r in samples[(build, name)])
        wall = statistics.median(walls)
        medians[(build, name)] = wall
        shown = f"{wall * 1000:.1f} ms" if wall < 1 else f"{wall:.2f} s"
        low, high = min(walls), max(walls)
        spread = f"{low * 1000:.1f}–{high * 1000:.1f} ms" if high < 1 else f"{low:.2f}–{high:.2f} s"
        print(f"| {build} | {name} | {shown} ({spread}) | {rss:.1f} MB | {wall / goal_s:.2f} | {rss / goal_mb:.2f} |")
if args.baseline:
    for name, *_ in cases:
        print(f"candidate / baseline, {name}: {medians[('candidate', name)] / medians[('baseline', name)]:.2f}×")
