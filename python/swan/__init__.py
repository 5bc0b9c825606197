"""swan's simulator from Python.

    import swan
    run = swan.sim(scheme="swan0", rgroups=4, ssds_per_rgroup=2, time=5)
    run["summary"]["user_write_mbps_after_gc_mean"], run["timeseries"]      # a dict, a DataFrame
    frame = swan.sweep({"scheme": ["swan0", "lograid0"], "rgroups": [2, 4]}, time=5)

Options are `swan sim --help`'s, written as keyword arguments (`ssds_per_rgroup=2` is
`--ssds-per-rgroup 2`; `True` is a bare flag). The simulation itself is the same Rust code the
`swan` binary runs, and is deterministic: the same options and seed give the same numbers.
`sweep` runs a grid of simulations on Dask distributed (a LocalCluster unless a scheduler
address is given) and returns one frame.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
from typing import Any, Iterable, Mapping

from . import _swan

__version__ = _swan.__version__

__all__ = ["sim", "plan", "read_trace", "sweep", "words"]

# Fields of a run's summary that measure the machine, not the simulated array: they differ
# between two runs of the same options, so `sweep` compares and `same_results` ignore them.
WALL_FIELDS = ("wall_s", "setup_wall_s", "requests_per_wall_s")


def words(**options: Any) -> list[str]:
    """The command-line words for `options` (`ssds_per_rgroup=2` -> `--ssds-per-rgroup 2`)."""
    out: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, (list, tuple, set, dict)):
            raise TypeError(f"option {name}={value!r}: give one value (sweep() takes lists)")
        else:
            out += [flag, str(value)]
    return out


def sim(out: str | os.PathLike | None = None, **options: Any) -> dict:
    """One simulated run, as `swan sim` with these options.

    Returns {"summary": dict (summary.json), "timeseries": DataFrame (timeseries.csv),
    "latency_cdf": DataFrame, "dir": the run directory}. The run directory is `out` if
    given, else a temporary directory removed once the results are read. Bad options raise
    ValueError with swan's own message.
    """
    if "out" in options:
        raise TypeError("give the run directory as sim(out=...), not an option")
    if out is None:
        with tempfile.TemporaryDirectory(prefix="swan-sim-") as d:
            result = _read_run(d, _swan.sim(words(**options), d))
            result["dir"] = None
            return result
    os.makedirs(out, exist_ok=True)
    return _read_run(os.fspath(out), _swan.sim(words(**options), os.fspath(out)))


def _read_run(d: str, summary_json: str) -> dict:
    import pandas as pd

    return {
        "summary": json.loads(summary_json),
        "timeseries": pd.read_csv(os.path.join(d, "timeseries.csv")),
        "latency_cdf": pd.read_csv(os.path.join(d, "latency_cdf.csv")),
        "dir": d,
    }


def plan(**options: Any) -> dict:
    """SWAN's Eq. 1, as `swan plan --json` with these options."""
    return json.loads(_swan.plan(words(**options)))


def read_trace(path: str | os.PathLike, format: str | None = None):
    """A block trace as a DataFrame (time_ns, device, offset, size, read), read by swan's
    own readers; the format (msr, spc, mqsim, disksim, blkparse, heimdall, cloudphysics, etw) is
    guessed from the first lines when not given. `frame.attrs["format"]` says which."""
    import pandas as pd

    fmt, t, dev, off, size, read = _swan.read_trace(os.fspath(path), format)
    frame = pd.DataFrame({"time_ns": t, "device": dev, "offset": off, "size": size, "read": read})
    frame.attrs["format"] = fmt
    return frame


def _grid(grid: Mapping[str, Iterable[Any]]) -> list[dict]:
    names = list(grid)
    values = [list(grid[n]) if isinstance(grid[n], (list, tuple, range)) else [grid[n]] for n in names]
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _summary_row(point: dict, common: dict) -> dict:
    """One run of a sweep: its point in the grid, then its summary's numbers (nested ones
    flattened with dots)."""
    summary = sim(**common, **point)["summary"]
    row = dict(point)
    for key, value in _flatten(summary):
        if key not in row and key != "options":
            row[key] = value
    return row


def _flatten(d: Mapping, prefix: str = ""):
    for key, value in d.items():
        name = f"{prefix}{key}"
        if key == "options" and not prefix:
            continue
        if isinstance(value, Mapping):
            yield from _flatten(value, name + ".")
        elif isinstance(value, (list, tuple)):
            continue
        else:
            yield name, value


def sweep(grid: Mapping[str, Iterable[Any]], scheduler: str | None = None, n_workers: int = 2,
          progress: bool | None = None, **common: Any):
    """Every combination of `grid`'s values (each run also gets `common`), simulated on Dask
    distributed, one row per run in grid order.

    `scheduler`: a Dask scheduler address ("tcp://host:8786") to run beyond this machine;
    by default a LocalCluster of `n_workers` single-threaded worker processes is started for
    the sweep and closed after it. Progress is drawn with Dask's own progress bar (by
    default only when standard error is a terminal). A script
    that calls this must guard its top level with `if __name__ == "__main__":`, as Dask's
    worker processes import it again.
    """
    import pandas as pd
    from dask.distributed import Client, LocalCluster, progress as dask_progress

    points = _grid(grid)
    if not points:
        raise ValueError("the grid holds no point")
    cluster = None
    if scheduler is None:
        # dashboard on any free port: a fixed one may be taken by another cluster.
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = [client.submit(_summary_row, p, common, pure=False) for p in points]
        if progress or (progress is None and sys.stderr.isatty()):
            dask_progress(futures)
        rows = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return pd.DataFrame(rows)
