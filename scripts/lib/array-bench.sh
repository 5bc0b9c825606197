# Sourced by the scripts that serve fresh arrays of member files and time a client against
# them (fig4a-live.sh), after they set DIR, RGROUPS and SSDS: the member
# paths, the server's socket, a trap that stops the server left running, and its CPU time.

members=()
for ((i = 0; i < RGROUPS * SSDS; i++)); do members+=("$DIR/m$i"); done
sock="$DIR/nbd.sock"
srv=
trap '[[ -n $srv ]] && kill "$srv" 2>/dev/null; true' EXIT
ticks=$(getconf CLK_TCK)
# Seconds of CPU (user + system) process $1 has used.
cpu_s() { awk -v t="$ticks" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
# Seconds of CPU the engine threads of server $1 have used: the thread that carries out every
# request and GC move, so the first to run out of time.
engine_cpu_s() {
  local t sum=0
  for t in /proc/"$1"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == swan-engine ]] || continue
    sum=$(awk -v s="$sum" -v t="$ticks" '{print s + ($14 + $15) / t}' "$t/stat")
  done
  echo "$sum"
}
