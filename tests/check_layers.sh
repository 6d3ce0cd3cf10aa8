#!/usr/bin/env bash
# The layering of xpar, checked on the sources' includes and on the object
# files' symbols.  Layers, lowest first:
#   include/ (the public headers: the floor every layer reads)
#   base/ (error slot, dtype facts, names, the backend interface)
#   backend_cpu/, backend_cuda/ (neither uses the other)
#   dispatch/
#   api/ (the public entry points)
#   mpi/, python/ (optional components on the public API, as applications)
# Checked:
#   1. every #include "..." of a layer's file names its own layer or a lower one;
#   2. every symbol one layer's objects take from another is defined below it;
#   3. mpi/'s objects take nothing from libxpar but the public API (xpar_*);
#   4. no circle among files: neither among the includes nor among the
#      objects (a file that calls a file that calls it back).
# Usage: check_layers.sh SOURCE_DIR OBJECTS... (the object files of the
# library's targets, and of xpar_mpi where it is built; ':' also separates them).
set -euo pipefail
export LC_ALL=C
src=${1:?usage: check_layers.sh SOURCE_DIR OBJECTS...}
shift
[ $# -ge 1 ] || { echo "check_layers: no object file given" >&2; exit 2; }
rank() {
  case $1 in
    include) echo 0 ;; base) echo 1 ;; backend_cpu | backend_cuda) echo 2 ;;
    dispatch) echo 3 ;; api) echo 4 ;; mpi | python) echo 5 ;; *) echo -1 ;;
  esac
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0

# ---- 1. includes -------------------------------------------------------------
cd "$src"
incs=0
while IFS= read -r file; do
  layer=${file%%/*}
  r=$(rank "$layer")
  dir=$(dirname "$file")
  while IFS= read -r inc; do
    # A quoted include is found beside the file first, else from the top of
    # the tree; xpar/... is a public header (include/, or mpi/include/).
    if [ -f "$dir/$inc" ]; then target=$(realpath -m --relative-to=. "$dir/$inc")
    elif [ -f "$inc" ]; then target=$inc
    elif [ -f "include/$inc" ]; then target=include/$inc
    elif [ -f "mpi/include/$inc" ]; then target=mpi/include/$inc
    else continue; fi
    incs=$((incs + 1))
    echo "$file $target" >>"$work/include-edges"
    tl=${target%%/*}
    [ "$tl" = "$layer" ] && continue
    t=$(rank "$tl")
    if [ "$t" -lt 0 ] || [ "$t" -ge "$r" ] ||
       { [ "$layer" = backend_cpu ] && [ "$tl" = backend_cuda ]; } ||
       { [ "$layer" = backend_cuda ] && [ "$tl" = backend_cpu ]; }; then
      echo "LAYER VIOLATION: $file includes $target" >&2
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find include base backend_cpu backend_cuda dispatch api mpi python -type f \
           \( -name '*.h' -o -name '*.c' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' \) \
           -not -path 'mpi/bench/*' | sort)

# ---- 2, 3. symbols ---------------------------------------------------------------
# Objects by layer: <target>.dir/<layer>/.../*.o, mpi's under xpar_mpi.dir/src.
# "layer object" for every object file given.
IFS=: read -r -a objs <<<"$*"
for o in "${objs[@]}"; do
  [ -n "$o" ] || continue
  [ -f "$o" ] || { echo "check_layers: no object file $o (build first)" >&2; exit 2; }
  rel=${o#*.dir/}
  rel=${rel#./} # Ninja writes <target>.dir/./<layer>/...
  layer=${rel%%/*}
  case $o in *xpar_mpi.dir/*) layer=mpi ;; esac
  [ "$(rank "$layer")" -ge 1 ] || continue
  echo "$layer $o"
done >"$work/objects"
[ "$(cut -d' ' -f1 "$work/objects" | sort -u | wc -l)" -ge 4 ] ||
  { echo "check_layers: fewer than 4 layers among the objects given" >&2; exit 2; }
while read -r layer o; do
  nm --defined-only -g "$o" 2>/dev/null | awk -v l="$layer" -v o="$o" 'NF == 3 { print $3, l, o }'
done <"$work/objects" >"$work/defs"
uses=0
while read -r layer o; do
  r=$(rank "$layer")
  while read -r sym owner file; do
    [ "$file" = "$o" ] && continue
    echo "$o $file" >>"$work/object-edges"
    [ "$owner" = "$layer" ] && continue
    uses=$((uses + 1))
    if [ "$layer" = mpi ]; then
      case $sym in xpar__*) echo "LAYER VIOLATION: mpi uses $sym, internal to libxpar" >&2; bad=1 ;; esac
    elif [ "$(rank "$owner")" -ge "$r" ]; then
      echo "LAYER VIOLATION: $layer uses $sym, defined in $owner" >&2
      bad=1
    fi
  done < <(nm -u "$o" 2>/dev/null | awk '{ print $2 }' | sort -u | join - <(sort -k1,1 "$work/defs"))
done <"$work/objects"

# ---- 4. circles ------------------------------------------------------------------
for kind in include object; do
  [ -s "$work/$kind-edges" ] || continue
  if ! sort -u "$work/$kind-edges" | tsort >/dev/null 2>"$work/loop"; then
    echo "CIRCLE among files ($kind graph):" >&2
    sed 's/^tsort: /  /' "$work/loop" | sed "s|$PWD/||; s|[^ ]*CMakeFiles/[^/]*/||" >&2
    bad=1
  fi
done

echo "check_layers: $incs includes, $uses symbols used across layers, all downward, no circle:" \
  "$([ $bad = 0 ] && echo yes || echo NO)"
exit $bad
