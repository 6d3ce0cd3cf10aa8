#!/usr/bin/env bash
# The layering of libxpar, checked on its object files: every symbol a layer
# uses from another is defined in a layer below it.  Layers, lowest first:
#   base/ (error slot, dtype facts, names)
#   backend_cpu/, backend_cuda/ (neither uses the other)
#   dispatch/
#   api/ (the public entry points)
# So no import circle between api/ and dispatch/, and backends never call
# upward.  Usage: check_layers.sh <the xpar target's object directory>.
set -euo pipefail
objdir=${1:?usage: check_layers.sh <CMakeFiles/xpar.dir>}
rank() {
  case $1 in
    base) echo 0 ;; backend_cpu | backend_cuda) echo 1 ;; dispatch) echo 2 ;; api) echo 3 ;;
    *) echo "check_layers: unknown layer $1" >&2; exit 2 ;;
  esac
}
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
layers=()
for dir in "$objdir"/*/; do
  layer=$(basename "$dir")
  layers+=("$layer")
  find "$dir" -name '*.o' -exec nm --defined-only -g {} + 2>/dev/null |
    awk -v l="$layer" 'NF == 3 { print $3, l }' >>"$defs"
done
[ ${#layers[@]} -ge 4 ] || { echo "check_layers: no layers under $objdir" >&2; exit 2; }
bad=0 uses=0
for layer in "${layers[@]}"; do
  r=$(rank "$layer")
  while read -r sym; do
    owner=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$defs")
    [ -n "$owner" ] && [ "$owner" != "$layer" ] || continue
    uses=$((uses + 1))
    o=$(rank "$owner")
    if [ "$o" -ge "$r" ]; then
      echo "LAYER VIOLATION: $layer uses $sym, defined in $owner" >&2
      bad=1
    fi
  done < <(find "$objdir/$layer" -name '*.o' -exec nm -u {} + 2>/dev/null | awk '{ print $2 }' | sort -u)
done
echo "check_layers: ${layers[*]}: $uses symbols used across layers, all downward: $([ $bad = 0 ] && echo yes || echo NO)"
exit $bad
