#!/usr/bin/env bash
# The repeated code the house counts (issue 29 §6; docs/architecture.md,
# "Repeated code"): the `duplicates` tool of the team's workplace run over a
# copy of the tracked tree in which every Go `import ( … )` block is blanked
# line for line. The tool passes over import lines by its own rule, but does
# not see the lines inside Go's grouped imports as such, so without the
# blanking most of its pairs are two files importing the same packages.
# Usage: scripts/duplicates-count.sh [TREE, default .]   (prints the tool's rows)
set -euo pipefail
src="${1:-$PWD}"; dst=$(mktemp -d)
cd "$src" && git ls-files | grep -v '^testdata/' | while read -r f; do [ -f "$f" ] || continue; mkdir -p "$dst/$(dirname "$f")"; cp "$f" "$dst/$f"; done
python3 - "$dst" <<'PY'
import os,re,sys
for root,ds,fs in os.walk(sys.argv[1]):
    for f in fs:
        if f.endswith('.go'):
            p=os.path.join(root,f); s=open(p,encoding='utf-8',errors='replace').read()
            s2=re.sub(r'(?ms)^import \(.*?^\)', lambda m: '\n'*m.group(0).count('\n'), s)
            if s2!=s: open(p,'w').write(s2)
PY
duplicates --repo "$dst" --most 200 --seconds 300
rm -rf "$dst"
