"""The Python API against the reference installed beside it (transformers' own
`chat_parsing`, of the version this interpreter has): signatures, argument handling, the
exceptions and their messages, the Python objects built, and the drop-in's install and
uninstall.
"""

from __future__ import annotations

import inspect
import math

import pytest

import rtbench

transformers = pytest.importorskip("transformers")
from transformers.utils.chat_parsing import response_parser as reference  # noqa: E402

VERSION = ".".join(transformers.__version__.split(".")[:2])
PARSE, PARSER = rtbench.api(VERSION)
REF_PARSE, REF_PARSER = reference.parse_response, reference.ResponseParser

BASE = {"start_anchor": "A:", "fields": {"content": {}}}


def json_field(**extra):
    return {"start_anchor": "A:", "fields": {"x": {"open": "<x>", "close": "</x>", "content": "json", **extra}}}


def outcome(f):
    """What a call gives: `("ok", result)` or `("raised", type name, message)`."""
    try:
        return ("ok", repr(f()))
    except Exception as e:  # noqa: BLE001 - every exception is compared with the reference's
        return ("raised", type(e).__name__, str(e))


# (text, template, keyword arguments): each must give what the reference gives.
CALLS = [
    ("<x>{}</x>", json_field(transform={"a": "{missing}"}), {"prefix": ""}),
    ('<x>{"name": "n"}</x>', json_field(transform={"a": "{content.name.x}"}), {"prefix": ""}),
    ("<x>[1e400, 123456789012345678901234567890, NaN, -Infinity, \"\\ud800\"]</x>", json_field(), {"prefix": ""}),
    ('<x>{"b": 1, "a": 2, "b": 3}</x>', json_field(), {"prefix": ""}),
    ("<x>{nope</x>", json_field(), {"prefix": ""}),
    ("x", {"start_anchor": "A:", "fields": {"x": {"open_pattern": "(", "close": "</x>"}}}, {"prefix": ""}),
    ("x", {"version": 2, **BASE}, {"prefix": ""}),
    ("x", {"start_anchor": "A:", "fields": {}}, {"prefix": ""}),
    ("x", "{}", {"prefix": ""}),
    ("x", 7, {"prefix": ""}),
    ("x", ("not", "a", "dict"), {"prefix": ""}),
    ("x", BASE, {}),
    ("hi\ud800", BASE, {"prefix": "A:\udfff"}),
    (None, BASE, {"prefix": ""}),
    ([1, 2], BASE, {"prefix": ""}),
    (5, BASE, {"prefix": ""}),
    ("x", BASE, {"prefix": [1]}),
    ("x", BASE, {"prefix": []}),
    ("x", BASE, {"prefix": b"A:"}),
    ("x", BASE, {"prefix": "", "tools": 5}),
    ("x", BASE, {"prefix": "", "tools": {"a": 1}}),
    ("x", {"start_anchor": "A:", "defaults": {"t": (1, 2)}, "fields": {"content": {}}}, {"prefix": ""}),
    (
        "<x>{\"name\": \"f\", \"arguments\": {\"n\": \"7\", \"s\": \"7\", \"l\": [\"1\", 2]}}</x>",
        json_field(),
        {
            "prefix": "",
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {"properties": {"n": {"type": "integer"}, "s": {"type": "string"}, "l": {"type": "integer"}}},
                    },
                }
            ],
        },
    ),
]


@pytest.mark.parametrize("text, template, kwargs", CALLS)
def test_parse_response_gives_the_references_result_or_exception(text, template, kwargs):
    assert outcome(lambda: PARSE(text, template, **kwargs)) == outcome(lambda: REF_PARSE(text, template, **kwargs))


@pytest.mark.parametrize("text, template, kwargs", CALLS)
def test_streaming_gives_the_references_events_and_exceptions(text, template, kwargs):
    def stream(cls):
        parser = cls(template, **kwargs)
        events = [list(parser.initial_events)]
        for chunk in ([text[: len(text) // 2], text[len(text) // 2 :]] if isinstance(text, str) else [text]):
            events.append(parser.feed(chunk))
        message, final = parser.finalize()
        return events, final, message, parser._output

    assert outcome(lambda: stream(PARSER)) == outcome(lambda: stream(REF_PARSER))


def test_values_are_the_python_objects_the_reference_builds():
    text = '<x>[1e400, 123456789012345678901234567890, NaN, {"b": 1, "a": 2}, "\\ud800"]</x>'
    got = PARSE(text, json_field(), prefix="")["x"]
    assert got[0] == math.inf and type(got[1]) is int and got[1] == 123456789012345678901234567890
    assert math.isnan(got[2]) and list(got[3]) == ["b", "a"] and got[4] == "\ud800"


def test_signatures_are_the_references():
    def shape(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    assert shape(PARSE) == shape(REF_PARSE)
    assert shape(PARSER.__init__) == shape(REF_PARSER.__init__)
    assert PARSER.__name__ == "ResponseParser"


def test_feed_and_finalize_after_finalize_raise_as_the_reference():
    for cls in (PARSER, REF_PARSER):
        parser = cls(BASE, prefix="")
        parser.finalize()
        assert outcome(lambda: parser.feed("x")) == ("raised", "RuntimeError", "ResponseParser already finalized")
        assert outcome(parser.finalize) == ("raised", "RuntimeError", "ResponseParser already finalized")


def test_callable_tools_are_read_as_the_reference_reads_them():
    def set_alarm(hour: int, label: str | None = None):
        """
        Set an alarm.

        Args:
            hour: The hour.
            label: A label.
        """

    text = '<x>{"name": "set_alarm", "arguments": {"hour": "7", "label": "null"}}</x>'
    tmpl = {
        "start_anchor": "A:",
        "fields": {"x": {"open": "<x>", "close": "</x>", "content": "xml-inline",
                         "content_args": {"tag_pattern": r"\"(?P<key>\w+)\": \"(?P<value>[^\"]*)\""},
                         "transform": {"type": "function", "function": {"name": "set_alarm", "arguments": "{content}"}}}},
    }
    assert PARSE(text, tmpl, prefix="", tools=[set_alarm]) == REF_PARSE(text, tmpl, prefix="", tools=[set_alarm])


def test_install_routes_transformers_and_uninstall_restores_it():
    import transformers.tokenization_utils_base as base
    import transformers.utils.chat_parsing as package

    before = (package.parse_response, package.ResponseParser, base._template_parse_response, base.ResponseParser)
    with rtbench.installed() as followed:
        assert followed == VERSION
        assert rtbench.installed_reference() == VERSION
        assert (package.parse_response, package.ResponseParser) == (PARSE, PARSER)
        assert (base._template_parse_response, base.ResponseParser) == (PARSE, PARSER)
        assert reference.ResponseParser is PARSER
    assert (package.parse_response, package.ResponseParser, base._template_parse_response, base.ResponseParser) == before
    assert rtbench.installed_reference() is None


def test_install_can_follow_the_other_version():
    other = "5.24" if VERSION == "5.25" else "5.25"
    try:
        assert rtbench.install(reference=other) == other
        import transformers.utils.chat_parsing as package

        assert package.parse_response is rtbench.api(other)[0]
    finally:
        rtbench.uninstall()


def test_an_unknown_version_is_refused_with_the_choices():
    with pytest.raises(ValueError, match=r'rtbench follows transformers 5.24 and 5.25 \(pass "5.24" or "5.25"\)'):
        rtbench.api("5.26")
