#!/usr/bin/env bash
# The repository speaks of the library, not of how its work went: fails on
# work-log words in tracked files -- numbered work periods and device runs,
# issue numbers, run folders, worktrees, "left for later" and the like.
# Findings belong in docs/ by topic (docs/performance.md, docs/design.md),
# each with its machine, date and the command that re-measures it.
# Usage: check_worklog.sh [source dir]   (lists the offending lines; exit 1)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
pattern='\bsessions? [0-9]|(^|[^-])\bcalls? [0-9]+\b|work period|next session|this session|left for later|worktree|bench/results|\bissues? [0-9]+|\bitem [0-9]+\b|-s[0-9]+\b|\bs[0-9]+-review|lead'"'"'s session'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git ls-files -z; }
else
  # no git metadata (an exported tree): every file but build outputs and hidden folders
  files() { find . -type f -not -path './build*' -not -path './out/*' -not -path './.*' -print0 |
            sed -z 's|^\./||'; }
fi
# This file names the words it looks for; images and baselines' raw data are not prose.
hits=$(files | grep -zv -e 'check_worklog.sh$' -e '\.png$' -e '^bench/baselines/' |
       xargs -0 grep -nIiE "$pattern" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits" | head -n 50
  echo "check_worklog: $(printf '%s\n' "$hits" | wc -l) lines read as a work log" >&2
  exit 1
fi
echo "check_worklog: no work-log words in tracked files"
