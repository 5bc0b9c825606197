//! Tests of the figure module (`swan_sim::report`) on the hand-made run directories in
//! `tests/fixtures/report/` and on runs generated into a temporary directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use swan_sim::report::{self, draw, load_run, Format, ReportOptions};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report").join(name)
}

fn fixtures() -> Vec<PathBuf> {
    vec![fixture("lograid0-3ssd"), fixture("swan0-3r1")]
}

/// A fresh, empty scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("swan-report-tests-{}", std::process::id())).join(test);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_run(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

fn file_names(paths: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = paths.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

fn svg(path: &Path) -> String {
    let s = fs::read_to_string(path).unwrap();
    assert!(s.trim_start().starts_with("<svg"), "{} does not start with <svg", path.display());
    assert!(s.trim_end().ends_with("</svg>"), "{} does not end with </svg>", path.display());
    s
}

#[test]
fn loads_fixture_runs() {
    let run = load_run(&fixture("lograid0-3ssd")).unwrap();
    assert_eq!(run.name, "lograid0-3ssd");
    assert_eq!(run.scheme(), Some("Log-RAID0"));
    assert_eq!(run.seed(), Some(42));
    assert_eq!(run.gc_onset_s(), Some(8.0));
    assert_eq!(run.ssd_write_mbps(), Some(400.0));
    assert_eq!(run.num_ssds(), 3);
    let ts = run.timeseries.as_ref().unwrap();
    assert_eq!(ts.len(), 20);
    assert_eq!(ts.time()[0], 1.0);
    assert_eq!(ts.column_names().len(), 7 + 4 * 3);
    let util = ts.numeric("victim_util").unwrap();
    assert_eq!(util[0], None, "empty cell = no value");
    assert!(util[10].is_some());
    assert_eq!(ts.ssd_column(2, "gc_write_mbps").unwrap().len(), 20);
    assert_eq!(ts.text("gc_group").unwrap()[10], "0");
    assert!(ts.numeric("front_group").unwrap().iter().all(Option::is_none));
    let lat = run.latency_cdf.as_ref().unwrap();
    assert!(lat.get("write").is_some() && lat.get("read").is_none());
    assert_eq!(lat.get("write").unwrap().points.last().unwrap().1, 1.0);
    let ssd = run.ssd_latency_cdf.as_ref().unwrap();
    assert!(ssd.get("read").is_some() && ssd.get("write").is_some());

    let swan = load_run(&fixture("swan0-3r1")).unwrap();
    assert_eq!(swan.scheme(), Some("SWAN0"));
    let ts = swan.timeseries.as_ref().unwrap();
    assert_eq!(ts.numeric("front_group").unwrap()[0], Some(0.0));
    assert_eq!(ts.text("gc_group").unwrap()[0], "");
}

#[test]
fn format_parses_and_displays() {
    assert_eq!("svg".parse::<Format>().unwrap(), Format::Svg);
    assert_eq!("PNG".parse::<Format>().unwrap(), Format::Png);
    let e = "jpg".parse::<Format>().unwrap_err().to_string();
    assert!(e.contains("jpg") && e.contains("svg") && e.contains("png"), "{e}");
    assert_eq!(Format::Svg.to_string(), "svg");
    assert_eq!(Format::Png.to_string(), "png");
}

#[test]
fn draws_every_svg_figure() {
    let out = scratch("svg");
    let opts = ReportOptions { out_dir: out.join("figs"), format: Format::Svg };
    let written = draw(&fixtures(), &opts).unwrap();
    assert_eq!(
        file_names(&written),
        vec![
            "fig5_throughput.svg",
            "fig6_per_ssd_lograid0-3ssd.svg",
            "fig6_per_ssd_swan0-3r1.svg",
            "fig7_victims_lograid0-3ssd.svg",
            "fig7_victims_swan0-3r1.svg",
            "latency_cdf.svg",
            "ssd_latency_cdf.svg",
        ]
    );
    for p in &written {
        assert!(p.starts_with(&opts.out_dir));
        assert!(fs::metadata(p).unwrap().len() > 1000, "{} is tiny", p.display());
    }
    let fig5 = svg(&opts.out_dir.join("fig5_throughput.svg"));
    for needle in
        ["Log-RAID0", "SWAN0", "Fig. 1 / 4 / 5", "Simulated time (s)", "User write throughput (MB/s)", "GC onset"]
    {
        assert!(fig5.contains(needle), "fig5 lacks {needle}");
    }
    let fig6 = svg(&opts.out_dir.join("fig6_per_ssd_swan0-3r1.svg"));
    for needle in ["SWAN0", "Fig. 6", "SSD 0", "SSD 1", "SSD 2", "Array", "Throughput (MB/s)", "swan0-3r1"] {
        assert!(fig6.contains(needle), "fig6 lacks {needle}");
    }
    assert!(!fig6.contains("SSD 3"));
    let fig7 = svg(&opts.out_dir.join("fig7_victims_lograid0-3ssd.svg"));
    for needle in ["Log-RAID0", "Fig. 7", "victim utilization", "Free segments"] {
        assert!(fig7.contains(needle), "fig7 lacks {needle}");
    }
    let lat = svg(&opts.out_dir.join("latency_cdf.svg"));
    for needle in ["Log-RAID0 write", "SWAN0 write", "SWAN0 read", "Cumulative fraction", "log scale"] {
        assert!(lat.contains(needle), "latency_cdf lacks {needle}");
    }
    assert!(
        !lat.contains("SWAN0 all") && !lat.contains("Log-RAID0 all"),
        "`all` must be skipped when read/write exist"
    );
    let ssd = svg(&opts.out_dir.join("ssd_latency_cdf.svg"));
    for needle in ["Log-RAID0", "SWAN0", "Fig. 12", "SSD read latency", "SSD write latency"] {
        assert!(ssd.contains(needle), "ssd_latency_cdf lacks {needle}");
    }
}

#[test]
fn draws_png_figures() {
    let out = scratch("png");
    let opts = ReportOptions { out_dir: out.clone(), format: Format::Png };
    let written = match draw(&fixtures(), &opts) {
        Ok(w) => w,
        Err(e) => {
            // A machine without fonts must get the helpful error, not a panic.
            let msg = e.to_string();
            assert!(msg.contains("fonts-dejavu-core") && msg.contains("svg"), "{msg}");
            eprintln!("skipping PNG checks: {msg}");
            return;
        }
    };
    assert_eq!(written.len(), 7);
    for p in &written {
        assert_eq!(p.extension().unwrap(), "png");
        let bytes = fs::read(p).unwrap();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", p.display());
        // IHDR width, big-endian at offset 16.
        let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        assert_eq!(width, 1200, "{}", p.display());
    }
}

#[test]
fn duplicate_schemes_get_directory_names() {
    let dir = scratch("dupes");
    copy_run(&fixture("lograid0-3ssd"), &dir.join("a"));
    copy_run(&fixture("lograid0-3ssd"), &dir.join("b"));
    copy_run(&fixture("swan0-3r1"), &dir.join("c"));
    let runs: Vec<_> = ["a", "b", "c"].iter().map(|n| load_run(&dir.join(n)).unwrap()).collect();
    assert_eq!(report::run_labels(&runs), vec!["Log-RAID0 (a)", "Log-RAID0 (b)", "SWAN0"]);
    let out = dir.join("out");
    let written = draw(
        &[dir.join("a"), dir.join("b"), dir.join("c")],
        &ReportOptions { out_dir: out.clone(), format: Format::Svg },
    )
    .unwrap();
    assert!(written.contains(&out.join("fig6_per_ssd_a.svg")));
    assert!(written.contains(&out.join("fig6_per_ssd_b.svg")));
    let fig5 = svg(&out.join("fig5_throughput.svg"));
    assert!(fig5.contains("Log-RAID0 (a)") && fig5.contains("Log-RAID0 (b)"));
}

#[test]
fn skips_figures_without_data() {
    let dir = scratch("skip");
    // Only a summary: nothing to draw, and no error.
    let bare = dir.join("bare");
    fs::create_dir_all(&bare).unwrap();
    fs::copy(fixture("swan0-3r1").join("summary.json"), bare.join("summary.json")).unwrap();
    let out = dir.join("out");
    let opts = ReportOptions { out_dir: out.clone(), format: Format::Svg };
    assert!(draw(std::slice::from_ref(&bare), &opts).unwrap().is_empty());

    // A time series without victims and without SSD columns, plus only an `all` CDF.
    let lean = dir.join("lean");
    fs::create_dir_all(&lean).unwrap();
    fs::copy(fixture("swan0-3r1").join("summary.json"), lean.join("summary.json")).unwrap();
    fs::write(
        lean.join("timeseries.csv"),
        "t_s,user_read_mbps,user_write_mbps,free_segments,victim_util,front_group,gc_group\n\
         1,0,100,10,,,\n2,0,120,9,,,\n3,0,,9,,,\n4,0,110,8,,,\n",
    )
    .unwrap();
    fs::write(lean.join("latency_cdf.csv"), "op,latency_us,fraction\nall,0,0.1\nall,50,0.5\nall,100,1\n").unwrap();
    let written = draw(&[bare, lean], &opts).unwrap();
    assert_eq!(file_names(&written), vec!["fig5_throughput.svg", "latency_cdf.svg"]);
    let lat = svg(&out.join("latency_cdf.svg"));
    assert!(lat.contains("SWAN0 (lean) all"), "both runs are SWAN0, so labels carry the directory name");
}

/// Writes a fixture copy whose `file` has `line` (1-based) replaced.
fn with_line_replaced(test: &str, file: &str, line: usize, new: &str) -> PathBuf {
    let dir = scratch(test).join("run");
    copy_run(&fixture("lograid0-3ssd"), &dir);
    let text = fs::read_to_string(dir.join(file)).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[line - 1] = new;
    fs::write(dir.join(file), lines.join("\n") + "\n").unwrap();
    dir
}

fn load_error(dir: &Path) -> String {
    format!("{:#}", load_run(dir).unwrap_err())
}

#[test]
fn malformed_files_name_file_line_and_column() {
    let ts = fs::read_to_string(fixture("lograid0-3ssd/timeseries.csv")).unwrap();
    let row5: Vec<&str> = ts.lines().nth(4).unwrap().split(',').collect();

    // Non-numeric cell in column 3 (user_write_mbps) of line 5.
    let mut bad = row5.clone();
    bad[2] = "fast";
    let dir = with_line_replaced("nonnumeric", "timeseries.csv", 5, &bad.join(","));
    let e = load_error(&dir);
    assert!(e.contains("timeseries.csv:5:"), "{e}");
    assert!(e.contains("column 3") && e.contains("user_write_mbps") && e.contains("fast"), "{e}");
    // draw() reports the same error.
    let out = dir.parent().unwrap().join("out");
    let e = draw(std::slice::from_ref(&dir), &ReportOptions { out_dir: out, format: Format::Svg }).unwrap_err();
    assert!(format!("{e:#}").contains("timeseries.csv:5:"));

    // Ragged row: one field too few on line 7.
    let row7: Vec<&str> = ts.lines().nth(6).unwrap().split(',').collect();
    let dir = with_line_replaced("ragged", "timeseries.csv", 7, &row7[..row7.len() - 1].join(","));
    let e = load_error(&dir);
    assert!(e.contains("timeseries.csv:7:") && e.contains("18 fields") && e.contains("19 columns"), "{e}");

    // Missing column.
    let header = ts.lines().next().unwrap().replace("free_segments", "free_segs");
    let dir = with_line_replaced("missing", "timeseries.csv", 1, &header);
    let e = load_error(&dir);
    assert!(e.contains("timeseries.csv:1:") && e.contains("missing column `free_segments`"), "{e}");

    // Empty time.
    let mut bad = row5.clone();
    bad[0] = "";
    let dir = with_line_replaced("emptytime", "timeseries.csv", 5, &bad.join(","));
    let e = load_error(&dir);
    assert!(e.contains("timeseries.csv:5:") && e.contains("t_s"), "{e}");

    // CDF: fraction out of range on line 3.
    let dir = with_line_replaced("cdf", "ssd_latency_cdf.csv", 3, "read,120,1.5");
    let e = load_error(&dir);
    assert!(e.contains("ssd_latency_cdf.csv:3:") && e.contains("fraction"), "{e}");
    let dir = with_line_replaced("cdfnum", "latency_cdf.csv", 4, "write,abc,0.5");
    let e = load_error(&dir);
    assert!(e.contains("latency_cdf.csv:4:") && e.contains("latency_us") && e.contains("abc"), "{e}");

    // JSON syntax error names the file and line.
    let dir = with_line_replaced("json", "summary.json", 3, "  \"seed\": 42,,");
    let e = load_error(&dir);
    assert!(e.contains("summary.json:3:"), "{e}");
    let dir = with_line_replaced("jsontype", "summary.json", 2, "  \"scheme\": 7,");
    let e = load_error(&dir);
    assert!(e.contains("summary.json") && e.contains("`scheme`"), "{e}");

    // Not a run directory.
    let e = load_error(&fixture("no-such-run"));
    assert!(e.contains("no-such-run"), "{e}");
    let empty = scratch("emptydir");
    let e = load_error(&empty);
    assert!(e.contains("summary.json") && e.contains("run directory"), "{e}");
}

/// A run with `ssds` SSDs and `rows` one-second intervals, GC from a third of the way in.
fn synthetic_run(dir: &Path, scheme: &str, ssds: usize, rows: usize) {
    use std::fmt::Write;
    fs::create_dir_all(dir).unwrap();
    let onset = rows / 3;
    fs::write(
        dir.join("summary.json"),
        format!("{{\"scheme\":\"{scheme}\",\"seed\":1,\"gc_onset_s\":{onset},\"ssd_write_mbps\":400}}"),
    )
    .unwrap();
    let mut s = String::from("t_s,user_read_mbps,user_write_mbps,free_segments,victim_util,front_group,gc_group");
    for i in 0..ssds {
        write!(s, ",ssd{i}_read_mbps,ssd{i}_write_mbps,ssd{i}_gc_read_mbps,ssd{i}_gc_write_mbps").unwrap();
    }
    s.push('\n');
    let groups = 3;
    let per_group = ssds.div_ceil(groups);
    for r in 0..rows {
        let t = r + 1;
        let front = (r / 200) % groups;
        let back = (front + 1) % groups;
        let gc = t >= onset;
        let wobble = ((r * 7919) % 97) as f64 / 97.0;
        let user = 400.0 * per_group as f64 * (0.95 + 0.05 * wobble);
        let util = if gc && r % 3 != 0 {
            format!("{:.3}", (0.1 + 0.5 * (r - onset) as f64 / rows as f64).min(0.6))
        } else {
            String::new()
        };
        let free = if gc { 40 + (r % 11) } else { 1000 - r * 900 / onset.max(1) };
        write!(s, "{t},0,{user:.1},{free},{util},{front},{}", if gc { back.to_string() } else { String::new() })
            .unwrap();
        for i in 0..ssds {
            let g = i / per_group;
            let w = if g == front { user / per_group as f64 } else { 0.0 };
            let gr = if gc && g == back { 120.0 + 40.0 * wobble } else { 0.0 };
            write!(s, ",0,{w:.1},{gr:.1},{:.1}", gr * 0.4).unwrap();
        }
        s.push('\n');
    }
    fs::write(dir.join("timeseries.csv"), s).unwrap();
}

#[test]
fn large_nine_ssd_run_is_quick() {
    let dir = scratch("large");
    let run_dir = dir.join("swan0-3r3-big");
    synthetic_run(&run_dir, "SWAN0", 9, 12_000);
    let start = Instant::now();
    let run = load_run(&run_dir).unwrap();
    let parse = start.elapsed();
    assert_eq!(run.num_ssds(), 9);
    assert_eq!(run.timeseries.as_ref().unwrap().len(), 12_000);
    assert!(parse.as_secs_f64() < 2.0, "parsing 12k x 43 took {parse:?}");

    let out = dir.join("out");
    let start = Instant::now();
    let written = draw(&[run_dir], &ReportOptions { out_dir: out.clone(), format: Format::Svg }).unwrap();
    assert!(start.elapsed().as_secs_f64() < 20.0, "drawing took {:?}", start.elapsed());
    assert_eq!(written.len(), 3, "{written:?}");
    let fig6 = svg(&out.join("fig6_per_ssd_swan0-3r3-big.svg"));
    assert!(fig6.contains("SSD 8"));
    // Decimation keeps the files small.
    assert!(fig6.len() < 3_000_000, "fig6 is {} bytes", fig6.len());
}

/// Renders the PNG versions of every figure (fixtures plus a 9-SSD run) into
/// `$SWAN_REPORT_PNG_DIR` for eyeballing; does nothing unless that variable is set.
#[test]
fn render_pngs_for_inspection() {
    let Some(out) = std::env::var_os("SWAN_REPORT_PNG_DIR").map(PathBuf::from) else { return };
    let big = out.join("runs").join("swan0-9ssd");
    synthetic_run(&big, "SWAN0 (3R-3SSD)", 9, 1200);
    let mut runs = fixtures();
    runs.push(big);
    for format in [Format::Png, Format::Svg] {
        let written = draw(&runs, &ReportOptions { out_dir: out.join(format.to_string()), format }).unwrap();
        eprintln!("{}", file_names(&written).join("\n"));
    }
}
