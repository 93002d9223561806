"""Checks tessel-tune --measure --format=json against the stand-in HIP
runtime (fake_hip.cpp): every candidate measured at 1000 / workgroups
microseconds per run, and the candidates ranked by that time."""
import json
import re
import sys

problems = json.load(open(sys.argv[1]))
assert len(problems) == 1, problems
problem = problems[0]
assert problem["measured"] is True and problem["prediction"] is True
m, n = map(int, re.search(r"(\d+)x(\d+)x\d+", problem["problem"]).groups())
times = []
for trial in problem["trials"]:
    tile = [int(t) for t in
            re.search(r"tile = \[(\d+), (\d+)", trial["config"]).groups()]
    workgroups = -(-m // tile[0]) * -(-n // tile[1])
    expected = 1000.0 / workgroups
    assert abs(trial["measured_us"] - expected) < 1e-3 * expected, (
        trial, expected)
    assert trial["model_us"] > 0, trial
    times.append(trial["measured_us"])
assert times == sorted(times), times
assert len(set(times)) > 1, "the test needs candidates of different grids"
print("measured ranking ok: %d candidates" % len(times))
