#!/usr/bin/env python3
"""Check the template schema in the JSON language server editors run, as they run it.

VS Code's built-in JSON support, Helix and Neovim (nvim-lspconfig's `jsonls`) all use
`vscode-json-language-server` (npm package `vscode-langservers-extracted`). This script starts
it over stdio, sends the settings the README's editor set-up gives (`json.schemas` with a
`file://` URL and a `fileMatch` by file name, `json.validate.enable`), opens template files and
reads what an editor would show:

- every scaffold of `rtbench new` (`schema/scaffolds/*/template.json`) gets no diagnostic;
- a template with one planted mistake per line gets one diagnostic on each of those lines,
  with the schema's own messages where it has them;
- hovering a key shows its documentation, and completion inside an `xml-inline` field's
  `content_args` offers that parser's options;
- with `json.validate.enable` left out (as Helix's own settings are when a user's
  `languages.toml` replaces them), the server reports nothing.

Usage:
  npm install --prefix /tmp/jsonls vscode-langservers-extracted
  python3 tools/schema/editor_check.py --server /tmp/jsonls/node_modules/.bin/vscode-json-language-server

It prints each check and exits 1 when one fails. The schema file is the committed
`schema/response-template.schema.json` (what `rtbench schema` prints).
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = ROOT / "schema" / "response-template.schema.json"

# One mistake per line; the line numbers below are those of this text.
PLANTED = """{
  "feilds": {},
  "start_anchor": "<|im_start|>assistant\\n",
  "fields": {
    "thinking": {"open": "<think>", "open_pattern": "<think>", "close": "</think>"},
    "flag": {"open": "<f>", "close": "</f>", "repeats": "false"},
    "calls": {"open": "<c>", "close": "</c>", "content": "jsno"},
    "named": {"open_pattern": "<n name=(?P<name>\\\\w+)>", "close": "</n>"},
    "mixed": {"open": "<m>", "close": "</m>", "transform": {"f": "call {content}"}},
    "joined": {"open": "<j>", "close": "</j>", "join": ""},
    "xml": {"open": "<x>", "close": "</x>", "content": "xml-inline", "content_args": {}},
    "content": {"close": "<|im_end|>"}
  }
}
"""
PLANTED_LINES = {
    2: "Property feilds is not allowed.",
    5: "give either open (literal text) or open_pattern (a regex), not both",
    6: "write true or false",
    7: "Value is not accepted.",
    8: "named groups in open_pattern/close_pattern need a transform",
    9: "a placeholder must be the whole string",
    10: 'join needs "repeats": true',
    11: 'Missing property "tag_pattern".',
}

COMPLETION = """{
  "start_anchor": "A:",
  "fields": {
    "c": {"open": "<c>", "content": "xml-inline", "content_args": {
      "tag_pattern": "<(?P<key>\\\\w+)>(?P<value>.*?)</(?P=key)>"
    }}
  }
}
"""


class Server:
    """A minimal LSP client over stdio."""

    def __init__(self, command: list[str], settings: dict):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.settings = settings
        self.buf = b""
        self.next_id = 0
        self.diagnostics: dict[str, list] = {}
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {
                    "textDocument": {
                        "completion": {"completionItem": {"snippetSupport": True}},
                        "hover": {"contentFormat": ["markdown", "plaintext"]},
                        "publishDiagnostics": {},
                    }
                },
                "initializationOptions": {"provideFormatter": True},
            },
        )
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict):
        self.next_id += 1
        wanted = self.next_id
        self.send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        deadline = time.time() + 20
        while time.time() < deadline:
            message = self.read(deadline - time.time())
            if message is None:
                break
            if message.get("id") == wanted and "method" not in message:
                return message.get("result")
            self.handle(message)
        raise SystemExit(f"no answer to {method}")

    def handle(self, message: dict) -> None:
        if "method" in message and "id" in message:
            result = None
            if message["method"] == "workspace/configuration":
                items = message["params"]["items"]
                result = [self.settings.get(i.get("section"), self.settings) for i in items]
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif message.get("method") == "textDocument/publishDiagnostics":
            params = message["params"]
            self.diagnostics[params["uri"]] = params["diagnostics"]

    def read(self, timeout: float):
        deadline = time.time() + timeout
        assert self.proc.stdout is not None
        while True:
            if b"\r\n\r\n" in self.buf:
                head, rest = self.buf.split(b"\r\n\r\n", 1)
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            left = deadline - time.time()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk

    def open(self, path: Path) -> tuple[str, list]:
        """Opens a file and returns its URI and diagnostics once they settle."""
        uri = path.resolve().as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "json", "version": 1, "text": path.read_text()}},
        )
        deadline = time.time() + 10
        quiet_since = time.time()
        while time.time() < deadline and time.time() - quiet_since < 1.5:
            message = self.read(0.3)
            if message is not None:
                self.handle(message)
                quiet_since = time.time()
        return uri, self.diagnostics.get(uri, [])


def settings(validate: bool) -> dict:
    json_settings: dict = {"schemas": [{"fileMatch": ["template.json"], "url": SCHEMA.as_uri()}]}
    if validate:
        json_settings["validate"] = {"enable": True}
    return {"json": json_settings}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="vscode-json-language-server")
    args = parser.parse_args()
    command = [args.server, "--stdio"]
    failures = []

    def check(ok: bool, what: str) -> None:
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        server = Server(command, settings(validate=True))
        try:
            for scaffold in sorted((ROOT / "schema" / "scaffolds").glob("*/template.json")):
                _, found = server.open(scaffold)
                check(found == [], f"{scaffold.relative_to(ROOT)}: no diagnostic {found}")

            planted = Path(tmp) / "planted" / "template.json"
            planted.parent.mkdir()
            planted.write_text(PLANTED)
            uri, found = server.open(planted)
            by_line: dict[int, list[str]] = {}
            for d in found:
                by_line.setdefault(d["range"]["start"]["line"] + 1, []).append(d["message"])
            for line, expected in PLANTED_LINES.items():
                messages = by_line.get(line, [])
                check(
                    any(expected in m for m in messages),
                    f"planted mistake on line {line}: {expected!r} in {messages}",
                )
            extra = sorted(set(by_line) - set(PLANTED_LINES))
            check(extra == [], f"no diagnostic on the other lines {extra}")

            hover = server.request(
                "textDocument/hover",
                {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 47}},
            )
            text = json.dumps(hover)
            check("How the region's body is parsed" in text, f"hover on content: {text[:120]}")

            completion = Path(tmp) / "completion" / "template.json"
            completion.parent.mkdir()
            completion.write_text(COMPLETION)
            uri, _ = server.open(completion)
            result = server.request(
                "textDocument/completion",
                {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 6}},
            )
            items = result["items"] if isinstance(result, dict) else result
            labels = sorted(i["label"] for i in items)
            check(
                labels == ["merge_duplicates", "tag_pattern", "value_parser", "value_parser_by"],
                f"completion in xml-inline content_args: {labels}",
            )
        finally:
            server.close()

        server = Server(command, settings(validate=False))
        try:
            _, found = server.open(planted)
            check(found == [], f"without json.validate.enable nothing is reported {found}")
        finally:
            server.close()

    print(f"{len(failures)} failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
