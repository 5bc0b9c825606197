"""The Python package against the `swan` binary it wraps, and a Dask sweep against the same
runs one by one. Run by scripts/test.sh after `pip install .` (python/README.md)."""

import json
import sys
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import swan

REPO = Path(__file__).resolve().parents[2]
SWAN_BIN = os.environ.get("SWAN_BIN", str(REPO / "target" / "release" / "swan"))
SMALL = dict(scheme="swan0", rgroups=2, ssds_per_rgroup=1, ssd_capacity="256MiB", time=0.5)


def binary(*args):
    if not os.path.isfile(SWAN_BIN):
        pytest.fail(f"{SWAN_BIN} not built: run cargo build --release first (or set SWAN_BIN)")
    return subprocess.run([SWAN_BIN, *args], check=True, capture_output=True, text=True).stdout


def without_wall(summary):
    return {k: v for k, v in summary.items() if k not in swan.WALL_FIELDS}


def test_sim_gives_what_the_binary_gives():
    run = swan.sim(**SMALL, seed=7)
    with tempfile.TemporaryDirectory() as d:
        binary("sim", *swan.words(**SMALL, seed=7), "--out", d, "--quiet")
        expected = json.loads(Path(d, "summary.json").read_text())
        timeseries = Path(d, "timeseries.csv").read_text().splitlines()
    assert run["summary"]["requests"] > 0
    assert without_wall(run["summary"]) == without_wall(expected)
    assert len(run["timeseries"]) == len(timeseries) - 1
    assert list(run["timeseries"].columns) == timeseries[0].split(",")


def test_an_option_of_swan_sim_reaches_python_unchanged():
    # SSD-to-SSD variation: defined once in swan sim's clap arguments, nothing in Python.
    opts = dict(SMALL, ssd_speed_spread=0.276, seed=3)
    run = swan.sim(**opts)
    factors = [ssd["speed_factor"] for ssd in run["summary"]["ssd_load"]]
    assert len(factors) == 2 and factors[0] != factors[1], factors
    with tempfile.TemporaryDirectory() as d:
        binary("sim", *swan.words(**opts), "--out", d, "--quiet")
        expected = json.loads(Path(d, "summary.json").read_text())
    assert without_wall(run["summary"]) == without_wall(expected)
    with pytest.raises(ValueError, match="ssd-speed-spread"):
        swan.sim(**dict(SMALL, ssd_speed_spread=-1))


def test_a_run_directory_is_kept_when_asked(tmp_path):
    run = swan.sim(out=tmp_path / "run", **SMALL)
    assert run["dir"] == str(tmp_path / "run")
    assert (tmp_path / "run" / "summary.json").is_file()


def test_bad_options_raise_with_swans_message():
    with pytest.raises(ValueError, match="no-such-option"):
        swan.sim(no_such_option=1)
    with pytest.raises(ValueError, match="swan9"):
        swan.sim(scheme="swan9")
    with pytest.raises(TypeError, match="sweep"):
        swan.sim(rgroups=[2, 4])


def test_read_trace_uses_swans_readers():
    frame = swan.read_trace(REPO / "data" / "traces" / "msr-hm_0-excerpt.csv")
    assert frame.attrs["format"] == "msr"
    assert len(frame) == 1000 and int(frame["read"].sum()) == 508
    assert frame["time_ns"].iloc[0] == 0
    with pytest.raises(ValueError, match="not a trace format"):
        swan.read_trace(REPO / "pyproject.toml")


def test_plan_is_the_binarys():
    assert swan.plan() == json.loads(binary("plan", "--json"))
    with pytest.raises(ValueError):
        swan.plan(disk_utilization=2)


def test_a_dask_sweep_equals_the_runs_one_by_one():
    grid = {"scheme": ["swan0", "lograid0"], "rgroups": [2, 3], "seed": [1, 2]}
    common = dict(ssds_per_rgroup=1, ssd_capacity="256MiB", time=0.3)
    frame = swan.sweep(grid, n_workers=2, progress=False, **common)
    assert len(frame) == 8
    for i, point in enumerate(swan._grid(grid)):
        alone = swan._summary_row(point, common)
        row = frame.iloc[i].to_dict()
        for key, value in alone.items():
            if key in swan.WALL_FIELDS:
                continue
            got = row[key]
            if value is None:
                assert got is None or got != got, (point, key)  # None, or NaN in the frame
            else:
                assert got == value, (point, key, got, value)


def test_the_readmes_python_quick_start_runs_as_written():
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("\n## Quick start: Python\n"):]
    start = section.index("```python\n") + len("```python\n")
    block = section[start:section.index("```", start)]
    out = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "lograid0" in out.stdout and "waf_ssd" in out.stdout, out.stdout
