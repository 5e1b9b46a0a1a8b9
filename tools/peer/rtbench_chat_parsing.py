"""A drop-in stand-in for `transformers.utils.chat_parsing` backed by the rtbench command line.

`parse_response(...)` and `ResponseParser(...)` here take the reference's arguments and give its
results, but every parse runs in the `rtbench` binary (`rtbench parse` / `rtbench stream`, the
contract of SPEC section 5); nothing is parsed in Python. It exists so that the reference's own
unit tests can be run against rtbench (see `run_peer_suite.py` beside it).

How each piece maps onto the command line:

* Templates and tools are written to temporary JSON files (`--template`, `--tools`); a callable
  tool is first converted with transformers' `get_json_schema`, as the reference does.
* `parse_response(text, ...)` is one `rtbench parse`; the printed JSON is read back with `json`
  (key order, big ints and NaN/Infinity survive). An error (`error: Type: message` on stderr,
  exit 1) is raised again as that Python type with that message: a `KeyError`'s message is the
  repr of its argument, so the argument is recovered with `ast.literal_eval`.
* `ResponseParser`: the constructor runs `rtbench stream` on an empty generation to get
  `initial_events` (and the constructor's errors). Every `feed(chunk)` runs `rtbench stream`
  again over all text fed so far with `--chunks` set to the exact sizes of every feed so far
  (code points, which is Python's `len`; token ids in id mode), and returns the events of the
  last feed; a feed that fails prints no line of its own, so its error is raised from `feed`.
  `finalize()` takes `final_events` and the message from the last run.
* Token ids (5.25, `tokenizer=`): the tokenizer is saved with `save_pretrained` to a temporary
  folder passed as `--model DIR --ids`; a text prefix goes as `--prefix-file`, an id prefix as
  `--prefix-ids`.

What is done in Python, not by rtbench (it is state keeping, not parsing):
* an empty feed (`feed("")`, `feed([])`) returns `[]` without running rtbench, whose
  `--chunks` takes positive sizes only (the reference re-scans an unchanged buffer, a no-op);
* `feed`/`finalize` after `finalize` raise `RuntimeError("ResponseParser already finalized")`,
  and a text `feed` on a token-id parser raises the reference's `TypeError`;
* `_output` is the finalized message (what the reference's attribute holds after `finalize`);
* `_coerce_tool_calls` is NOT routed: it delegates to the reference's private method (tests of
  private helpers are reported as "not routed" by the runner).

The reference version follows the installed transformers (5.24.x -> `--reference 5.24`, 5.25.x
-> `--reference 5.25`; `RTBENCH_PEER_REFERENCE` overrides it). The binary is `$RTBENCH_BIN`, else
`rtbench` on PATH.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import json
import os
import re
import shutil
import subprocess
import tempfile
import weakref
from typing import Any

__all__ = ["ResponseParser", "parse_response", "RtbenchError", "RtbenchCliError"]


class RtbenchError(Exception):
    """rtbench's own error type (`error: rtbench: ...`): an error the reference never raises."""


class RtbenchCliError(RuntimeError):
    """The command line failed in a way that is not a reference error (usage, I/O, bad output)."""


def _binary() -> str:
    return os.environ.get("RTBENCH_BIN", "rtbench")


def _installed_version() -> str:
    import transformers

    return transformers.__version__


def _reference() -> str:
    override = os.environ.get("RTBENCH_PEER_REFERENCE")
    if override:
        return override
    major_minor = ".".join(_installed_version().split(".")[:2])
    if major_minor not in ("5.24", "5.25"):
        raise RtbenchCliError(f"transformers {_installed_version()} is neither 5.24 nor 5.25")
    return major_minor


def _takes_token_ids() -> bool:
    return _reference() != "5.24"


# --- errors -------------------------------------------------------------------------------------

_CONTEXT_LINE = re.compile(r"^\s*(-->|\||=)")
_TYPED = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): ?(.*)$", re.S)


def _error_text(stderr: str) -> str | None:
    """The message of the first `error: ...` on stderr, without the diagnostic context lines."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error: "):
            message = [line[len("error: ") :]]
            for more in lines[i + 1 :]:
                if _CONTEXT_LINE.match(more) or more.startswith("error: "):
                    break
                message.append(more)
            return "\n".join(message)
    return None


def _json_decode_error(message: str) -> Exception:
    m = re.match(r"^(.*): line (\d+) column (\d+) \(char (\d+)\)$", message, re.S)
    err = json.JSONDecodeError.__new__(json.JSONDecodeError)
    Exception.__init__(err, message)
    if m:
        err.msg, err.lineno, err.colno, err.pos = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    else:
        err.msg, err.lineno, err.colno, err.pos = message, 1, 1, 0
    err.doc = ""
    return err


def _exception(name: str, message: str) -> Exception | None:
    if name == "KeyError":
        try:
            return KeyError(ast.literal_eval(message))
        except (ValueError, SyntaxError):
            return KeyError(message)
    if name == "JSONDecodeError":
        return _json_decode_error(message)
    if name == "error":  # the `regex` module's error class
        import regex

        return regex.error(message)
    if name == "rtbench":
        return RtbenchError(message)
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, BaseException):
        return cls(message)
    return None


def _raise_from(proc: subprocess.CompletedProcess, *, prefix_missing: bool) -> None:
    text = _error_text(proc.stderr)
    if proc.returncode == 1 and text is not None:
        m = _TYPED.match(text)
        if m:
            exc = _exception(m.group(1), m.group(2))
            if exc is not None:
                raise exc
        if prefix_missing and text.startswith("a prefix is required"):
            # SPEC 5: no prefix option at all is an error (the reference's ValueError for prefix=None)
            raise ValueError(text)
    raise RtbenchCliError(f"rtbench exited {proc.returncode}: {proc.stderr.strip()}")


# --- inputs -------------------------------------------------------------------------------------


def _to_py(value: Any) -> Any:
    if isinstance(value, (str, list)) or value is None:
        return value
    try:
        from transformers.utils.generic import to_py_obj

        return to_py_obj(value)
    except ImportError:
        return value.tolist() if hasattr(value, "tolist") else value


def _tool_schemas(tools: Any) -> Any:
    if tools is None:
        return None
    from inspect import isfunction, ismethod

    from transformers.utils.chat_template_utils import get_json_schema

    return [get_json_schema(t) if isfunction(t) or ismethod(t) else t for t in tools]


_SAVED_TOKENIZERS: dict[int, tuple[Any, str]] = {}


def _model_dir(tokenizer: Any) -> str:
    """A folder holding the tokenizer (`save_pretrained`), kept for the life of the process."""
    key = id(tokenizer)
    if key not in _SAVED_TOKENIZERS:
        folder = tempfile.mkdtemp(prefix="rtbench-peer-model-")
        atexit.register(shutil.rmtree, folder, True)
        tokenizer.save_pretrained(folder)
        _SAVED_TOKENIZERS[key] = (tokenizer, folder)  # keep the object alive so its id stays unique
    return _SAVED_TOKENIZERS[key][1]


class _Job:
    """The files of one parse: template, tools, prefix, model; shared by every run of a parser."""

    def __init__(self, response_template: Any, prefix: Any, tools: Any, tokenizer: Any):
        self.dir = tempfile.mkdtemp(prefix="rtbench-peer-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.dir, True)
        self.ids = tokenizer is not None
        if not isinstance(response_template, (dict, list, str, int, float, bool, type(None))):
            raise TypeError(
                f"rtbench shim: cannot pass a {type(response_template).__name__} template to the command line"
            )
        template = response_template
        if isinstance(template, dict) and "response_template" in template:
            template = {"response_template": template}  # unambiguous: a tokenizer_config.json
        self.args = ["--reference", _reference(), "--template", self._write("template.json", template)]
        schemas = _tool_schemas(tools)
        if schemas is not None:
            self.args += ["--tools", self._write("tools.json", schemas)]
        if self.ids:
            self.args += ["--ids", "--model", _model_dir(tokenizer)]
        self.prefix_missing = prefix is None
        if prefix is None:
            pass  # no prefix option: rtbench raises the reference's error after checking the template
        elif isinstance(prefix, str):
            if prefix == "":
                self.args += ["--prefix", ""]
            else:
                self.args += ["--prefix-file", self._write_text("prefix.txt", prefix)]
        else:
            prefix = _to_py(prefix)
            if self.ids and prefix:
                self.args += ["--prefix-ids", self._write("prefix_ids.json", prefix)]
            elif not prefix:
                self.args += ["--prefix", ""]  # an empty id list: the reference consumes nothing
            else:
                raise TypeError("rtbench shim: a token-id prefix needs `tokenizer=`")

    def _write(self, name: str, value: Any) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f)  # ensure_ascii: lone surrogates travel as escapes
        return path

    def _write_text(self, name: str, text: str) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        return path

    def output_file(self, generation: Any) -> str:
        if self.ids:
            return self._write("generation.json", generation)
        return self._write_text("generation.txt", generation)

    def run(self, command: str, generation: Any, extra: list[str]) -> subprocess.CompletedProcess:
        argv = [_binary(), command, *self.args, *extra, self.output_file(generation)]
        return subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape")


def _generation(text: Any, ids: bool) -> Any:
    if ids:
        if isinstance(text, str):
            raise TypeError("This parser was created with a `tokenizer`, so `feed` takes token ids, not text.")
        return list(_to_py(text) or [])
    if text is None or (not isinstance(text, str) and not text):
        return ""
    if not isinstance(text, str):
        raise TypeError(f'can only concatenate str (not "{type(text).__name__}") to str')
    return text


def _check_tokenizer_arg(tokenizer: Any, name: str) -> None:
    if tokenizer is not None and not _takes_token_ids():
        raise TypeError(f"{name}() got an unexpected keyword argument 'tokenizer'")


# --- the public API -----------------------------------------------------------------------------


def parse_response(
    text: Any,
    response_template: Any,
    *,
    prefix: Any = None,
    tools: Any = None,
    tokenizer: Any = None,
) -> dict:
    """`transformers.utils.chat_parsing.parse_response`, computed by `rtbench parse`."""
    _check_tokenizer_arg(tokenizer, "parse_response")
    job = _Job(response_template, prefix, tools, tokenizer)
    proc = job.run("parse", _generation(text, job.ids), [])
    if proc.returncode != 0:
        _raise_from(proc, prefix_missing=job.prefix_missing)
    return json.loads(proc.stdout)


class ResponseParser:
    """`transformers.utils.chat_parsing.ResponseParser`, computed by `rtbench stream` (see the module doc)."""

    def __init__(self, response_template: Any, prefix: Any = None, *, tools: Any = None, tokenizer: Any = None):
        if tokenizer is not None and not _takes_token_ids():
            raise TypeError("ResponseParser.__init__() got an unexpected keyword argument 'tokenizer'")
        self._template_arg, self._tools_arg = response_template, tools
        self._job = _Job(response_template, prefix, tools, tokenizer)
        self._feeds: list[Any] = []  # every non-empty feed so far (str, or list of ids)
        self._finalized = False
        self._last: tuple[list[dict], subprocess.CompletedProcess] | None = None
        lines, proc = self._stream()
        if not lines or "initial_events" not in lines[0]:
            _raise_from(proc, prefix_missing=self._job.prefix_missing)
        self.initial_events: list[dict] = lines[0]["initial_events"]

    def _stream(self) -> tuple[list[dict], subprocess.CompletedProcess]:
        if self._job.ids:
            generation: Any = [i for chunk in self._feeds for i in chunk]
        else:
            generation = "".join(self._feeds)
        sizes = ",".join(str(len(chunk)) for chunk in self._feeds) or "1"
        proc = self._job.run("stream", generation, ["--chunks", sizes])
        if proc.returncode not in (0, 1):
            raise RtbenchCliError(f"rtbench exited {proc.returncode}: {proc.stderr.strip()}")
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        self._last = (lines, proc)
        return lines, proc

    def feed(self, text: Any) -> list[dict]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        chunk = _generation(text, self._job.ids)
        if not chunk:
            return []
        self._feeds.append(chunk)
        lines, proc = self._stream()
        chunk_lines = [line for line in lines if "chunk" in line]
        if len(chunk_lines) < len(self._feeds):  # this feed failed: no line of its own
            _raise_from(proc, prefix_missing=False)
        line = chunk_lines[len(self._feeds) - 1]
        if line["chunk"] != chunk:
            raise RtbenchCliError(f"rtbench fed {line['chunk']!r} where the caller fed {chunk!r}")
        return line["events"]

    def finalize(self) -> tuple[dict, list[dict]]:
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        lines, proc = self._last if self._last is not None else self._stream()
        final = [line for line in lines if "final_events" in line]
        if not final:
            _raise_from(proc, prefix_missing=False)
        self._output = final[0]["message"]
        self._finalized = True
        return self._output, final[0]["final_events"]

    def _coerce_tool_calls(self, value: Any, **kwargs: Any) -> Any:
        """NOT ROUTED through rtbench: the reference's private method, on a reference parser built
        with the same template and tools (tests that call it are reported as not routed). The
        runner never patches `response_parser.ResponseParser`, so that name is the reference's."""
        from transformers.utils.chat_parsing import response_parser as reference

        parser = reference.ResponseParser(self._template_arg, prefix="", tools=self._tools_arg)
        return parser._coerce_tool_calls(value, **kwargs)
