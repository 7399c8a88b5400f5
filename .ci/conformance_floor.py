"""Checks a conformance report (run.py --json) against the per-category floor in
conformance-floor.json: a category that passes fewer cases than its floor fails CI.
Raise the floor when more cases pass; never lower it."""
import json
import sys

report = json.load(open(sys.argv[1]))
floor = json.load(open(sys.argv[2]))
bad = []
for cat, want in sorted(floor.items()):
    got = report["categories"].get(cat, {}).get("passed", 0)
    mark = "ok" if got >= want else "BELOW FLOOR"
    print(f"{cat:24} {got:4} (floor {want}) {mark}")
    if got < want:
        bad.append(cat)
if bad:
    print("conformance regressed in: " + ", ".join(bad))
    sys.exit(1)
