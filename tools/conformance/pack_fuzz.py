#!/usr/bin/env python3
"""Pack differential fuzz cases (written by the conformance kit's fuzz.py) into one gzipped
JSON Lines file for the test suite, so CI can run them without Python.

    pack_fuzz.py CASE_DIR OUT.jsonl.gz
"""
import gzip, json, sys
from pathlib import Path

src, out = Path(sys.argv[1]), Path(sys.argv[2])
files = sorted(src.glob("*.json"))
with gzip.open(out, "wt", encoding="utf-8", compresslevel=9) as f:
    for p in files:
        case = json.loads(p.read_text(encoding="utf-8"))
        f.write(json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"packed {len(files)} cases into {out} ({out.stat().st_size / 1e6:.1f} MB)")
