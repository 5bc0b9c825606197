# Sourced by scripts that need Debian packages: install_debs WHO "command:package"...
# installs (as root, with apt-get) the packages whose command is missing, or fails naming
# them; then fails if a command is still missing. Nothing is skipped silently.

need_cmd() { command -v "$1" >/dev/null 2>&1; }

install_debs() {
  local who=$1 pair
  shift
  local missing=()
  for pair in "$@"; do
    need_cmd "${pair%%:*}" || missing+=("${pair#*:}")
  done
  if ((${#missing[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
      echo "$who: missing packages ${missing[*]} and not root to install them; run: sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
    echo "$who: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
  for pair in "$@"; do
    need_cmd "${pair%%:*}" || { echo "$who: ${pair%%:*} still missing after installing ${pair#*:}" >&2; exit 1; }
  done
}
