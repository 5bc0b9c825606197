//! The native half of the `swan` Python package (`python/swan/`): the simulator, SWAN's plan
//! and the trace readers, called with the command line's own options so Python and the
//! `swan` binary share one set of tunables and checks. Results cross as JSON text and plain
//! columns; the Python half turns them into dicts and data frames.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use swan_sim::trace::{detect, TraceFormat, TraceOp, TraceReader};

fn value_error(e: anyhow::Error) -> PyErr {
    PyValueError::new_err(format!("{e:#}"))
}

/// `swan sim WORDS` with its run directory in `out`; returns summary.json's text. The GIL is
/// released while it runs, so threads of one process can simulate side by side.
#[pyfunction]
fn sim(py: Python<'_>, words: Vec<String>, out: PathBuf) -> PyResult<String> {
    let summary = py.allow_threads(|| swan_lab::api::sim(&words, &out)).map_err(value_error)?;
    serde_json::to_string(&summary).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `swan plan WORDS --json`'s text.
#[pyfunction]
fn plan(words: Vec<String>) -> PyResult<String> {
    let plan = swan_lab::api::plan(&words).map_err(value_error)?;
    serde_json::to_string(&plan).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Columns of a trace read with swan's readers (the format guessed from its first 20 lines
/// when not given): its format's name, then time_ns, device, offset, size and is-read
/// columns. A malformed line is an error naming the file and the line.
#[pyfunction]
#[pyo3(signature = (path, format=None))]
#[allow(clippy::type_complexity)]
fn read_trace(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
) -> PyResult<(String, Vec<u64>, Vec<u32>, Vec<u64>, Vec<u64>, Vec<bool>)> {
    let open = || File::open(&path).map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())));
    let format: TraceFormat = match format {
        Some(f) => f.parse().map_err(|e| PyValueError::new_err(format!("format {f:?}: {e}")))?,
        None => {
            let first: Vec<String> = BufReader::new(open()?).lines().take(20).map_while(Result::ok).collect();
            let lines: Vec<&str> = first.iter().map(String::as_str).collect();
            detect(&lines).ok_or_else(|| {
                PyValueError::new_err(format!("{}: not a trace format swan reads; give format=", path.display()))
            })?
        }
    };
    let file = open()?;
    py.allow_threads(|| {
        let (mut t, mut dev, mut off, mut size, mut read) = (vec![], vec![], vec![], vec![], vec![]);
        for r in TraceReader::new(format, BufReader::new(file), false) {
            let r = r.map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
            t.push(r.time_ns);
            dev.push(r.device);
            off.push(r.offset_bytes);
            size.push(r.size_bytes);
            read.push(r.op == TraceOp::Read);
        }
        Ok((format.name().to_string(), t, dev, off, size, read))
    })
}

#[pymodule]
fn _swan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
