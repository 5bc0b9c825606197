#!/usr/bin/env bash
# Regenerates the seed corpus of the nbd_protocol fuzz target from real clients: nbdinfo,
# qemu-img, nbdcopy and nbdsh talk to a real `swan serve` through record.py, which saves what
# each client sent. Each transcript becomes a seed with the target's 2-byte prefix (server
# configuration, then how the stream is cut); a STARTTLS variant of each (the same options
# after an NBD_OPT_STARTTLS, with TLS on and required) is derived from it, since under TLS
# the real bytes are ciphertext.
#
#   fuzz/capture.sh        # writes fuzz/corpus/nbd_protocol/*.bin
set -euo pipefail
cd "$(dirname "$0")/.."
for t in nbdinfo nbdcopy nbdsh qemu-img python3; do
  command -v "$t" >/dev/null || { echo "capture.sh: $t is missing" >&2; exit 1; }
done
cargo build --release -p swan-cli --locked
swan=$(pwd)/target/release/swan
out=$(pwd)/fuzz/corpus/nbd_protocol
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export SWAN_RUN_DIR=$work
"$swan" create --scheme raid0 --rgroups 1 --ssds-per-rgroup 2 --member-size 64M "$work/m0" "$work/m1" >/dev/null
"$swan" serve --listen 127.0.0.1:0 "$work/m0" "$work/m1" 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "serving on" "$work/serve.log" && break; sleep 0.1; done
sport=$(grep -o "serving on 127.0.0.1:[0-9]*" "$work/serve.log" | cut -d: -f2)
pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 fuzz/record.py "$pport" "$sport" "$work/rec" &
pids+=($!)
sleep 0.5
uri=nbd://127.0.0.1:$pport
head -c 65536 /dev/urandom >"$work/in.img"

# Runs one client, then files what it sent under NAME.
n=0
record() {
  local name=$1; shift
  "$@" >/dev/null 2>&1 || true
  sleep 0.3
  for f in $(ls "$work/rec"/conn-*.bin 2>/dev/null | sort -V); do
    n=$((n + 1))
    mv "$f" "$work/$name-$n.raw"
  done
}
mkdir -p "$work/rec"
record nbdinfo nbdinfo "$uri"
record nbdinfo-list nbdinfo --list "$uri"
record nbdinfo-size nbdinfo --size "$uri/swan"
record nbdinfo-map nbdinfo --map "$uri"
record qemu-img-info qemu-img info -f raw "$uri"
record qemu-img-convert-in qemu-img convert -n -f raw -O raw "$work/in.img" "$uri"
record nbdcopy-in nbdcopy --flush "$work/in.img" "$uri"
record nbdcopy-out nbdcopy "$uri" "$work/out.img"
# Requests libnbd refuses in strict mode (Debian's python3 has the libnbd module).
record nbdsh-strict-off env PATH="/usr/bin:/bin:$PATH" nbdsh -c "
h.set_strict_mode(0)
h.connect_uri('$uri')
for f in (lambda: h.pread(4096, 512), lambda: h.pread(0, 0), lambda: h.pwrite(b'x' * 4096, h.get_size()),
          lambda: h.pread(4096, 0, 0x8000), lambda: h.trim(4096, 4096), lambda: h.zero(4096, 8192),
          lambda: h.cache(4096, 0), lambda: h.flush()):
    try:
        f()
    except nbd.Error:
        pass
h.shutdown()"

rm -rf "$out"
mkdir -p "$out"
python3 - "$work" "$out" <<'PY'
import glob, os, struct, sys
work, out = sys.argv[1], sys.argv[2]
starttls = struct.pack(">QII", 0x49484156454F5054, 5, 0)
# Target prefix: byte 0 = configuration (bits 0-1 TLS off/on/require, bit 2 minimum block
# 4096, bit 4 a 127 MiB export: what `swan serve` of this array offers), byte 1 = cutting seed.
for raw in sorted(glob.glob(os.path.join(work, "*.raw"))):
    data = open(raw, "rb").read()
    if len(data) < 4:
        continue
    name = os.path.basename(raw)[:-4]
    open(os.path.join(out, name + ".bin"), "wb").write(bytes([0x14, 0]) + data)
    for mode, tag in ((1, "tls-on"), (2, "tls-require")):
        derived = bytes([0x14 | mode, 7]) + data[:4] + starttls + data[4:]
        open(os.path.join(out, "%s-%s.bin" % (name, tag)), "wb").write(derived)
PY
ls -l "$out"
