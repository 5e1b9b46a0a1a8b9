"""The reference's response-parsing API (`transformers.utils.chat_parsing`) on rtbench's engine.

`parse_response` and `ResponseParser` take the reference's arguments, in the same positions and
with the same names, for each reference version: 5.25 adds `tokenizer=` (token ids in, control
tokens defused as the reference's `TokenIdDecoder` does); 5.24 has no such argument. They raise
the reference's exceptions with its messages, and return the objects it builds.

Arguments are checked here in the order the reference checks them; the engine (`_native`)
loads the template, parses with the GIL released and builds the message and events. A template
or tools list holding Python objects the engine does not model (a tuple, a set, a custom
object, a dict subclass) is handed, with the whole call, to the reference implementation of the
same version when transformers is installed.
"""

from __future__ import annotations

import json
from inspect import isfunction, ismethod
from typing import Any

from . import _native
from ._errors import Unsupported


def _reference_impl(reference: str):
    """The reference's own `(parse_response, ResponseParser)` for `reference`, if installed."""
    from . import _install

    return _install.original_api(reference)


def _unsupported(reference: str, exc: Unsupported):
    impl = _reference_impl(reference)
    if impl is None:
        raise TypeError(
            f"rtbench cannot read {exc} in a response template or tools list (it reads dicts, lists, "
            "str, int, float, bool and None); convert it, or install transformers "
            f"{reference} to have the reference parse such inputs"
        ) from None
    return impl


def _tools(tools: Any) -> list | None:
    """The tools as the engine reads them: callables turned into schemas as the reference does."""
    if not tools:
        return None
    out = []
    for tool in tools:
        if isfunction(tool) or ismethod(tool):
            from transformers.utils.chat_template_utils import get_json_schema

            tool = get_json_schema(tool)
        out.append(tool)
    return out


def _ids(obj: Any) -> list:
    """Token ids as a list of ints (numpy arrays and torch tensors included), as `to_py_obj` does."""
    try:
        from transformers.utils.generic import to_py_obj
    except ImportError:
        to_py_obj = None
    if to_py_obj is not None:
        obj = to_py_obj(obj)
    elif hasattr(obj, "tolist"):
        obj = obj.tolist()
    return obj if isinstance(obj, list) else list(obj)


def _text_prefix(prefix: Any) -> str | None:
    """The prefix of a text parser: `None`, a str, or empty; anything else raises as the reference does."""
    if prefix is None or isinstance(prefix, str):
        return prefix
    if not prefix:
        return ""
    if isinstance(prefix, (bytes, bytearray, memoryview)):
        raise TypeError("cannot use a string pattern on a bytes-like object")
    raise TypeError(f"a bytes-like object is required, not '{type(prefix).__name__}'")


class _Tokenizers:
    """rtbench's handle on a transformers tokenizer, made once per tokenizer object and rebuilt
    when its added tokens or chat template change."""

    def __init__(self):
        import weakref

        self._handles = weakref.WeakKeyDictionary()

    def handle(self, tokenizer) -> _native.TokenizerHandle:
        # What the control tokens and the vocabulary depend on: the added tokens, the chat
        # templates and the tokenizer's own list of control tokens.
        chat_template = tokenizer.chat_template
        control_list = getattr(tokenizer, "chat_control_tokens", None)
        key = (
            len(tokenizer),
            json.dumps(chat_template, sort_keys=True, default=str),
            tuple(control_list) if control_list is not None else None,
        )
        try:
            cached = self._handles.get(tokenizer)
        except TypeError:  # not weakly referenceable
            cached = None
        if cached is not None and cached[0] == key:
            return cached[1]
        # The reference's `TokenIdDecoder`: control tokens from every chat template of the tokenizer.
        templates = list(chat_template.values()) if isinstance(chat_template, dict) else [chat_template or ""]
        control = sorted({token for template in templates for token in tokenizer._get_control_tokens(template)})
        handle = _native.TokenizerHandle(tokenizer.backend_tokenizer.to_str(), control)
        try:
            self._handles[tokenizer] = (key, handle)
        except TypeError:
            pass
        return handle


_TOKENIZERS = _Tokenizers()


class _Parser(_native.StreamParser):
    """The streaming parser, shared by both versions' classes (see `ResponseParser`): the
    arguments are checked here, `feed`, `finalize` and `_output` are native."""

    _reference = "5.25"

    def _setup(self, response_template, prefix, tools, tokenizer):
        self._tools_list = None
        try:
            self._tools_list = _tools(tools) if tools else None
            if tokenizer is None:
                if prefix is not None and type(prefix) is not str:
                    # The template is checked before the prefix, as the reference does.
                    _native.check_template(response_template, self._reference)
                    prefix = _text_prefix(prefix)
                self._start(response_template, prefix, self._tools_list, self._reference)
            else:
                if prefix is None:
                    # The reference's missing-prefix error, after the template is loaded.
                    self._start(response_template, None, self._tools_list, self._reference)
                handle = _TOKENIZERS.handle(tokenizer)
                if isinstance(prefix, str):
                    prefix = tokenizer.encode(prefix, add_special_tokens=False)
                self._start(response_template, _ids(prefix), self._tools_list, self._reference, handle, _ids)
        except Unsupported as exc:
            impl = _unsupported(self._reference, exc)
            kwargs = {"tools": tools}
            if tokenizer is not None:
                kwargs["tokenizer"] = tokenizer
            fallback = impl[1](response_template, prefix, **kwargs)
            self._hand_to(fallback)
            self.initial_events = fallback.initial_events
            return
        self.initial_events = self._initial_events()

    def _coerce_tool_calls(self, value, *, typed: bool = False):
        """Casts the string arguments of tool calls in `value` (in place) by the tools' schemas."""
        if isinstance(value, list):
            return [self._coerce_tool_calls(item, typed=typed) for item in value]
        fn = value.get("function") if isinstance(value, dict) else None
        if not isinstance(fn, dict):
            return value
        name, arguments = fn.get("name"), fn.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict) or not self._tools_list:
            return value
        # Only strings are ever cast: the engine sees the strings, everything else as None.
        probe = {
            key: argument
            if isinstance(argument, str)
            else [item if isinstance(item, str) else None for item in argument]
            if isinstance(argument, list)
            else None
            for key, argument in arguments.items()
        }
        cast = _native.coerce_arguments(name, probe, self._tools_list, typed, self._reference)
        for key, argument in list(arguments.items()):
            new = cast.get(key)
            if isinstance(argument, str):
                arguments[key] = new
            elif isinstance(argument, list) and isinstance(new, list):
                merged = [n if isinstance(a, str) else a for a, n in zip(argument, new)]
                if any(m is not a for m, a in zip(merged, argument)):
                    arguments[key] = merged
        return value


def _parse(text, response_template, prefix, tools, tokenizer, reference):
    try:
        tools_list = _tools(tools) if tools else None
        if tokenizer is None:
            if type(text) is str and (prefix is None or type(prefix) is str):
                return _native.parse_text(response_template, text, prefix, tools_list, reference)
            # Unusual arguments: checked in the reference's order by a streaming parser.
            parser = _PARSERS[reference](response_template, prefix=prefix, tools=tools)
            parser.feed(text)
            return parser.finalize()[0]
        if prefix is None:
            # Loads the template, then raises the reference's missing-prefix error.
            _native.StreamParser()._start(response_template, None, tools_list, reference)
        handle = _TOKENIZERS.handle(tokenizer)
        if isinstance(prefix, str):
            prefix = tokenizer.encode(prefix, add_special_tokens=False)
        if isinstance(text, str):
            parser = _PARSERS[reference](response_template, prefix=prefix, tools=tools, tokenizer=tokenizer)
            parser.feed(text)
        return _native.parse_ids(response_template, _ids(text), _ids(prefix), tools_list, handle, reference)
    except Unsupported as exc:
        impl = _unsupported(reference, exc)
        kwargs = {"prefix": prefix, "tools": tools}
        if tokenizer is not None:
            kwargs["tokenizer"] = tokenizer
        return impl[0](text, response_template, **kwargs)


class ResponseParser(_Parser):
    """A streaming parser with a `response_template`, as transformers' (5.25) `ResponseParser`:
    `initial_events` (the prefix's events), `feed(text_or_ids)` and `finalize()`."""

    _reference = "5.25"

    def __init__(self, response_template, prefix=None, *, tools=None, tokenizer=None):
        self._setup(response_template, prefix, tools, tokenizer)


class ResponseParser524(_Parser):
    """transformers 5.24's `ResponseParser` (text only: no `tokenizer` argument)."""

    _reference = "5.24"

    def __init__(self, response_template, prefix=None, *, tools=None):
        self._setup(response_template, prefix, tools, None)


_PARSERS = {"5.25": ResponseParser, "5.24": ResponseParser524}


def parse_response(text, response_template, *, prefix=None, tools=None, tokenizer=None) -> dict:
    """Parses a whole generation (text, or token ids with a `tokenizer`) into a message dict, as
    transformers' (5.25) `parse_response`."""
    return _parse(text, response_template, prefix, tools, tokenizer, "5.25")


def parse_response_524(text, response_template, *, prefix=None, tools=None) -> dict:
    """transformers 5.24's `parse_response` (text only: no `tokenizer` argument)."""
    return _parse(text, response_template, prefix, tools, None, "5.24")


def api(reference: str = "5.25"):
    """`(parse_response, ResponseParser)` with the semantics of transformers `reference`."""
    if reference == "5.25":
        return parse_response, ResponseParser
    if reference == "5.24":
        return parse_response_524, ResponseParser524
    raise ValueError(
        f"unknown reference version {reference!r}: rtbench follows transformers 5.24 and 5.25 "
        '(pass "5.24" or "5.25")'
    )
