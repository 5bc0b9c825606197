#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what it needs, then builds and tests every crate.
#
#   scripts/test.sh            # everything
#   SWAN_MODEL_OPS=100000 scripts/test.sh   # a quicker model check (default: 1,000,000 ops per scheme)
#
# A missing tool is installed (as root, with apt-get) or reported as an error: nothing is skipped silently.
set -euo pipefail
SCRIPT=test.sh
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF2'
Usage: scripts/test.sh [--help]

The whole test suite, as CI runs it (.ci/run calls this). Installs the Debian packages and
Python tools the tests drive (as root with apt-get and pip; otherwise says what to run),
then builds and tests every crate, the Python package and the NBD fuzz target. A missing
tool is installed or reported as an error: no test is skipped silently.

Environment:
  SWAN_MODEL_OPS  operations per scheme in the model check (default 1000000)
  SWAN_FUZZ_SECONDS  how long the fuzz target runs (default 45)
  SWAN_TRACES     the trace excerpts the replay tests read (default data/traces)
  SWAN_PY_VENV    the Python package's virtualenv (default target/py-venv)
  TMPDIR          where tests put member files (default: a new directory on /dev/shm when
                  it has 8 GiB free, else /tmp; 6 GiB free is required)
  CARGO_PROFILE_RELEASE_LTO, CARGO_PROFILE_RELEASE_DEBUG
                  the suite's release builds (default off and line-tables-only: linking
                  the test binaries with Cargo.toml's thin LTO took 3.7 times as long)
EOF2
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

# shellcheck source=scripts/lib/debs.sh
source scripts/lib/debs.sh

# Debian packages the suite uses, as "command:package" pairs.
# The server's end-to-end tests drive swan with real clients; none of them is ever skipped.
DEB_TOOLS=(
  "fio:fio"
  "nbdinfo:libnbd-bin"
  "nbdcopy:libnbd-bin"
  "nbdfuse:libnbd-bin"
  "nbdsh:python3-libnbd"
  "openssl:openssl"
  "qemu-img:qemu-utils"
  "nbdkit:nbdkit"
  "db_bench:rocksdb-tools"
  "mkfs.ext4:e2fsprogs"
  "losetup:mount"
  "man:man-db"
  "python3:python3"
  "prometheus:prometheus"
  "chromium:chromium"
)
install_debs test.sh "${DEB_TOOLS[@]}"
# The Python package is built and tested in a virtualenv (python3-venv has no command of its own).
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "test.sh: python3 -m venv does not work and not root to install it; run: sudo apt-get install -y python3-venv" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
  python3 -c 'import venv, ensurepip' || { echo "test.sh: python3 -m venv still does not work" >&2; exit 1; }
fi

if ! need_cmd cargo; then
  echo "test.sh: cargo not found; install the Rust toolchain (rustup) first" >&2
  exit 1
fi
# The suite builds the release profile without its thin LTO, and with line tables only for
# debug information: linking some fifty test binaries with LTO took 999 s of a 1761 s run on
# two cores, against 273 s without. LTO changes the code's speed, not its behaviour, and no
# test times anything; what ships (`cargo install`, repro/run.sh, the benches) keeps the
# profile in Cargo.toml. Set either variable to build the suite as shipped.
export CARGO_PROFILE_RELEASE_LTO=${CARGO_PROFILE_RELEASE_LTO:-off}
export CARGO_PROFILE_RELEASE_DEBUG=${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}

# The real trace excerpts the tests replay are in the repository (data/traces).
export SWAN_TRACES="${SWAN_TRACES:-$(pwd)/data/traces}"

# The server's tests write member files of up to 2 GiB each, two tests at a time. They go
# to tmpfs when it has room: the disk under a clone may be shared and nearly full, and a
# full file system under the members makes the server refuse writes with ENOSPC (as it
# must), which would fail the tests for the machine's sake, not swan's.
test_tmp=
if [[ -z ${TMPDIR:-} && -d /dev/shm ]] && (($(df --output=avail -k /dev/shm | tail -1) > 8 * 1024 * 1024)); then
  test_tmp=$(mktemp -d /dev/shm/swan-test.XXXXXX)
  export TMPDIR=$test_tmp
fi
tmp_free_kib=$(df --output=avail -k "${TMPDIR:-/tmp}" | tail -1)
echo "test.sh: temporary files in ${TMPDIR:-/tmp}, $((tmp_free_kib / 1024)) MiB free there"
if ((tmp_free_kib < 6 * 1024 * 1024)); then
  echo "test.sh: the tests need about 6 GiB free for temporary files; ${TMPDIR:-/tmp} has $((tmp_free_kib / 1024)) MiB (set TMPDIR to a roomier place)" >&2
  exit 1
fi

# Each phase's wall time is printed at the end, so a suite that outgrows its budget says where.
phase_start=$SECONDS
phases=()
phase_done() {
  phases+=("$1 $((SECONDS - phase_start)) s")
  phase_start=$SECONDS
}

set -x
cargo build --release --workspace --all-targets --locked
{ set +x; } 2>/dev/null
phase_done build
set -x
log=$(mktemp)
trap 'rm -f "$log"; [[ -z $test_tmp ]] || rm -rf "$test_tmp"' EXIT
# --lib --bins --tests: every unit and integration test (the crates have no doc tests);
# --no-fail-fast: one failing test binary does not hide the others' results.
set +e
cargo test --release --workspace --locked --no-fail-fast --lib --bins --tests 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
{ set +x; } 2>/dev/null
phase_done "cargo test"
passed=$(grep -o '[0-9]* passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -o '[0-9]* failed' "$log" | awk '{s += $1} END {print s + 0}')
if [[ $status -ne 0 && $failed -eq 0 ]]; then
  failed=1 # a build error or a crashed test binary counts as a failure
fi

# The Python package (python/README.md): built with maturin into a virtualenv kept under
# target/, its dependencies from PyPI, then its tests (Dask sweeps on a LocalCluster) run.
py_venv=${SWAN_PY_VENV:-$(pwd)/target/py-venv}
py_log=$(mktemp)
set +e
if python3 -m venv "$py_venv" &&
  "$py_venv/bin/pip" install -q "maturin>=1.5,<2" "pandas>=1.5" "dask[distributed]>=2023.1" "pytest>=7" &&
  PATH="$py_venv/bin:$PATH" "$py_venv/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps .; then
  PATH="$py_venv/bin:$PATH" SWAN_BIN="$(pwd)/target/release/swan" \
    "$py_venv/bin/python" -m pytest -q -p no:cacheprovider python/tests 2>&1 | tee "$py_log"
  py_status=${PIPESTATUS[0]}
else
  py_status=1
fi
py_passed=$(grep -o '[0-9]* passed' "$py_log" | awk '{s += $1} END {print s + 0}')
py_failed=$(grep -o '[0-9]* failed\|[0-9]* error' "$py_log" | awk '{s += $1} END {print s + 0}')
set -e
rm -f "$py_log"
if [[ $py_status -ne 0 && $py_failed -eq 0 ]]; then
  echo "python: the package did not build or its tests did not run"
  py_failed=1
fi
echo "python: $py_passed passed, $py_failed failed"
passed=$((passed + py_passed))
failed=$((failed + py_failed))
[[ $py_status -eq 0 ]] || status=1
phase_done python

# The product apart from the laboratory: the server's commands and their tests build with
# swan-cli's `lab` feature off, nothing of the lab or the simulator is in that build, and the
# Python package reaches the simulator without swan-cli.
if cargo check --locked --quiet -p swan-cli --no-default-features --all-targets &&
  ! cargo tree --locked -p swan-cli --no-default-features -e normal | grep -q 'swan-lab\|swan-sim' &&
  ! cargo tree --locked -p swan-py -e normal | grep -q 'swan-cli'; then
  echo "the server without the laboratory (swan-cli --no-default-features): builds, no swan-lab or swan-sim in it"
  passed=$((passed + 1))
else
  echo "the server without the laboratory (swan-cli --no-default-features): FAILED"
  failed=$((failed + 1))
  status=1
fi

# What a newcomer types to install the tool, from this clone: `cargo install --path
# crates/swan-cli` (into a scratch root, reusing this build, so with the suite's profile
# settings above), then the installed binary runs.
install_root=$(mktemp -d)
if cargo install --locked --quiet --path crates/swan-cli --root "$install_root" --target-dir target &&
  "$install_root/bin/swan" --version | grep -q '^swan .*(commit '; then
  echo "cargo install --path crates/swan-cli: $("$install_root/bin/swan" --version)"
  passed=$((passed + 1))
else
  echo "cargo install --path crates/swan-cli: FAILED"
  failed=$((failed + 1))
  status=1
fi
rm -rf "$install_root"
phase_done "lab-free check and install"

# The NBD protocol fuzz target (fuzz/README.md), for a bounded time from the committed seeds
# (real client transcripts) into a scratch corpus. Stable Rust: no sanitizer, coverage on.
if ! need_cmd cargo-fuzz; then
  echo "test.sh: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi
fuzz_seconds=${SWAN_FUZZ_SECONDS:-45}
fuzz_corpus=$(mktemp -d)
fuzz_log=$(mktemp)
trap 'rm -rf "$log" "$py_log" "$fuzz_corpus" "$fuzz_log"; [[ -z $test_tmp ]] || rm -rf "$test_tmp"' EXIT
if (cd fuzz && cargo fuzz run -s none nbd_protocol "$fuzz_corpus" corpus/nbd_protocol -- \
  -max_total_time="$fuzz_seconds" -print_final_stats=1) >"$fuzz_log" 2>&1; then
  runs=$(grep -o 'number_of_executed_units: [0-9]*' "$fuzz_log" | awk '{print $2}')
  echo "fuzz nbd_protocol: ${runs:-?} executions in ${fuzz_seconds} s, no crash"
  passed=$((passed + 1))
else
  tail -n 60 "$fuzz_log"
  echo "fuzz nbd_protocol: FAILED (the crashing input is under fuzz/artifacts/nbd_protocol/)"
  failed=$((failed + 1))
  status=1
fi
phase_done fuzz
echo "test.sh: wall time by phase: $(IFS=,; echo "${phases[*]}" | sed 's/,/, /g')"
echo "swan: $passed passed, $failed failed"
exit "$status"
