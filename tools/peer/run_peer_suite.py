"""The peer suite: the reference's own unit tests, run against the reference and against rtbench.

transformers' `tests/utils/test_chat_parsing.py` (the version matching the installed
transformers; 5.24.0 is upstream commit 0d7e95d96b4e187c651e2b2406ed98ed40d74963) is run twice
with unittest under the current interpreter, each run in a child process:

1. reference: the file as it is, against the installed `transformers.utils.chat_parsing`;
2. rtbench: with `parse_response` and `ResponseParser` replaced by `rtbench_chat_parsing` (the
   shim beside this file, backed by the rtbench command line) everywhere the tests reach them:
   the `transformers.utils.chat_parsing` package (so the test module's own imports get the shim)
   and the names `tokenization_utils_base` calls (`ResponseParser`, `_template_parse_response`),
   so `tokenizer.parse_response` and `tokenizer.get_response_parser` also parse with rtbench.
   The module `transformers.utils.chat_parsing.response_parser` is left alone.

Tests that call the reference's private helpers (`_coerce`, `_schema_types`, a parser's
`_coerce_tool_calls`) test the reference's Python, not a parse: they still run in the rtbench
pass (with the reference's helpers) but are reported as "not routed" and never counted as
rtbench passes.

The test file is public code and is never copied into this repository: pass its path.

Usage (one run per reference version; hub downloads fail fast offline, which is expected):

    /tmp/oracle524/bin/python tools/peer/run_peer_suite.py /tmp/peer/test_chat_parsing.py --rtbench /tmp/peer/rtbench
    /tmp/oracle525/bin/python tools/peer/run_peer_suite.py /tmp/peer/test_chat_parsing.py --rtbench /tmp/peer/rtbench

It prints every test whose outcome differs between the two runs (with the failure message),
the tests the reference itself cannot run (hub access, missing torch), and the summary line:

    peer suite (transformers 5.24.0): reference passed X/N, rtbench passed Y/N (same Z); not routed: K

Exit status: 0 when every routed test the reference passes also passes with rtbench, else 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PRIVATE_HELPERS = re.compile(r"\b_coerce\(|\b_schema_types\(|\._coerce_tool_calls\(")


# --- the child: one unittest run ----------------------------------------------------------------


def _patch_with_rtbench() -> None:
    sys.path.insert(0, HERE)
    import rtbench_chat_parsing as shim
    import transformers.tokenization_utils_base as tub
    import transformers.utils.chat_parsing as chat_parsing

    chat_parsing.parse_response = shim.parse_response
    chat_parsing.ResponseParser = shim.ResponseParser
    tub.ResponseParser = shim.ResponseParser
    tub._template_parse_response = shim.parse_response


class _Recorder(unittest.TestResult):
    """Outcome of every test: pass, fail, error or skip, with the first failure's last line."""

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: dict[str, dict] = {}

    def _set(self, test, outcome: str, detail: str = "") -> None:
        rec = self.outcomes.setdefault(test.id(), {"outcome": "pass", "detail": ""})
        rank = {"pass": 0, "skip": 1, "fail": 2, "error": 3}
        if rank[outcome] > rank[rec["outcome"]] or (outcome == rec["outcome"] and not rec["detail"]):
            rec["outcome"], rec["detail"] = outcome, detail

    @staticmethod
    def _describe(err, where: str = "") -> str:
        exc_type, exc, tb = err
        text = "".join(traceback.format_exception_only(exc_type, exc)).strip()
        hub = any("from_pretrained" in frame.name for frame in traceback.extract_tb(tb))
        return (f"[{where}] " if where else "") + ("[hub] " if hub else "") + text[:600]

    def startTest(self, test) -> None:
        super().startTest(test)
        self.outcomes[test.id()] = {"outcome": "pass", "detail": ""}

    def addFailure(self, test, err) -> None:
        super().addFailure(test, err)
        self._set(test, "fail", self._describe(err))

    def addError(self, test, err) -> None:
        super().addError(test, err)
        self._set(test, "error", self._describe(err))

    def addSkip(self, test, reason) -> None:
        super().addSkip(test, reason)
        self._set(test, "skip", reason)

    def addSubTest(self, test, subtest, err) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            self._set(test, "fail" if failed else "error", self._describe(err, subtest._subDescription()))


def _iter_tests(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _iter_tests(item)
        else:
            yield item


def child(mode: str, test_path: str, out_path: str) -> None:
    if mode == "rtbench":
        _patch_with_rtbench()
    import transformers

    spec = importlib.util.spec_from_file_location("test_chat_parsing", test_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_chat_parsing"] = module
    spec.loader.exec_module(module)
    if mode == "rtbench":
        import rtbench_chat_parsing as shim

        assert module.parse_response is shim.parse_response and module.ResponseParser is shim.ResponseParser
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    not_routed = []
    for test in _iter_tests(suite):
        source = inspect.getsource(getattr(test, test._testMethodName))
        if PRIVATE_HELPERS.search(source):
            not_routed.append(test.id())
    result = _Recorder()
    started = time.monotonic()
    suite.run(result)
    with open(out_path, "w") as f:
        json.dump(
            {
                "version": transformers.__version__,
                "seconds": round(time.monotonic() - started, 1),
                "outcomes": result.outcomes,
                "not_routed": not_routed,
            },
            f,
        )


# --- the parent: two runs and the comparison ----------------------------------------------------


def _run_child(mode: str, test_path: str, rtbench: str | None) -> dict:
    env = dict(os.environ)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if rtbench:
        env["RTBENCH_BIN"] = os.path.abspath(rtbench)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        proc = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", mode, "--out", out, test_path],
            env=env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0 or not os.path.exists(out):
            sys.exit(f"the {mode} run failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        with open(out) as f:
            return json.load(f)


def _short(test_id: str) -> str:
    return test_id.split(".", 1)[1] if test_id.startswith("test_chat_parsing.") else test_id


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("test_file", help="path to transformers' tests/utils/test_chat_parsing.py")
    ap.add_argument("--rtbench", help="the rtbench binary (default: $RTBENCH_BIN, else rtbench on PATH)")
    ap.add_argument("--child", choices=["reference", "rtbench"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    test_path = os.path.abspath(args.test_file)
    if args.child:
        child(args.child, test_path, args.out)
        return 0

    ref = _run_child("reference", test_path, None)
    rtb = _run_child("rtbench", test_path, args.rtbench)
    ref_out, rtb_out = ref["outcomes"], rtb["outcomes"]
    not_routed = set(rtb["not_routed"])
    tests = list(ref_out)
    passed = lambda outcomes, t: outcomes.get(t, {}).get("outcome") == "pass"  # noqa: E731

    print(f"transformers {ref['version']}: {len(tests)} tests; reference run {ref['seconds']}s, rtbench run {rtb['seconds']}s")
    diverging = []
    print("\ntests whose outcome differs (reference -> rtbench):")
    for t in tests:
        a, b = ref_out[t]["outcome"], rtb_out.get(t, {"outcome": "missing"})["outcome"]
        if a != b:
            tag = " [not routed]" if t in not_routed else ""
            print(f"  {_short(t)}{tag}: {a} -> {b}")
            for side, rec in (("reference", ref_out[t]), ("rtbench", rtb_out.get(t, {}))):
                if rec.get("detail") and rec.get("outcome") != "pass":
                    print(f"      {side}: {rec['detail']}")
            if a == "pass" and t not in not_routed:
                diverging.append(t)
    if not any(ref_out[t]["outcome"] != rtb_out.get(t, {}).get("outcome") for t in tests):
        print("  (none)")

    print("\ntests the reference itself does not pass:")
    for t in tests:
        rec = ref_out[t]
        if rec["outcome"] != "pass":
            why = "needs the Hugging Face hub" if "[hub]" in rec["detail"] else rec["detail"]
            print(f"  {_short(t)}: {rec['outcome']} ({why})")

    print("\nnot routed (they call the reference's private helpers; never counted as rtbench passes):")
    for t in tests:
        if t in not_routed:
            print(f"  {_short(t)}: reference {ref_out[t]['outcome']}, shim run {rtb_out.get(t, {}).get('outcome')}")

    ref_passed = sum(passed(ref_out, t) for t in tests)
    rtb_passed = sum(passed(rtb_out, t) for t in tests if t not in not_routed)
    same = sum(passed(ref_out, t) and passed(rtb_out, t) for t in tests if t not in not_routed)
    routed_ref = sum(passed(ref_out, t) for t in tests if t not in not_routed)
    print(
        f"\npeer suite (transformers {ref['version']}): reference passed {ref_passed}/{len(tests)}, "
        f"rtbench passed {rtb_passed}/{len(tests)} (same {same}); not routed: {len(not_routed)} "
        f"(routed tests: reference passed {routed_ref}/{len(tests) - len(not_routed)})"
    )
    return 1 if diverging else 0


if __name__ == "__main__":
    sys.exit(main())
