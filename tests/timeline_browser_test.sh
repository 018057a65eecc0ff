#!/usr/bin/env bash
# The timeline in a real browser: runs SCENARIO on the host twin, draws its timeline, loads the page
# in headless Chromium and checks that it loads without a console message (no script error) and
# shows as many lanes, mappings and step columns as the report says, counted here independently
# of vmm-run (from the report's JSON with python3).
#   tests/timeline_browser_test.sh VMMRUN SCENARIO WORKDIR
# Exit 77 (CTest: skipped) where no chromium is installed (tools/deps.sh installs it on Debian).
set -euo pipefail
vmmrun=$1 scenario=$2 work=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIP: no chromium on PATH (tools/deps.sh installs it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
"$vmmrun" run "$scenario" --backend host --report "$work/report.json" -q >/dev/null
"$vmmrun" timeline "$work/report.json" -o "$work/timeline.html"
# Chromium wants a writable HOME and profile; --no-sandbox because CI runs as root.
HOME=$work timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
  --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
  --dump-dom "file://$work/timeline.html" >"$work/dom.html" 2>"$work/browser.log"
if grep -E ':CONSOLE' "$work/browser.log"; then
  echo "FAIL: the page logged to the console (above)"
  exit 1
fi
python3 - "$work/report.json" "$work/dom.html" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
dom = open(sys.argv[2]).read()
want = {
    "lane": sum(1 for b in report["buffers"] if "view_of" not in b),
    "mapping": sum(1 for s in report["steps"] if s["op"] == "map" and s["status"] == "ok"),
    "column": len(report["steps"]),
}
got = {k: len(re.findall(r'<g class="%s"' % k, dom)) for k in want}
print("want", want, "got", got)
if want != got or want["mapping"] == 0:
    sys.exit("FAIL: the page does not show what the report says")
print("PASS")
PY
