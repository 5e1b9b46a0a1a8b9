"""The drop-in: transformers' response parsing routed through rtbench.

`install()` replaces `parse_response` and `ResponseParser` where transformers defines and uses
them: the `transformers.utils.chat_parsing` package and its `response_parser` module, and the
names `tokenization_utils_base` calls from `PreTrainedTokenizerBase.parse_response` and
`get_response_parser` (so the tokenizer's own batching, prefix broadcasting and decoding stay
the installed version's, and only the parsing moves). `uninstall()` puts the originals back.
"""

from __future__ import annotations

import contextlib
import sys

from . import _api

# (module, attribute, original) for everything `install` replaced.
_saved: list[tuple[object, str, object]] = []
_active: list[str] = []


def _version_of_transformers() -> str:
    import transformers

    return ".".join(transformers.__version__.split(".")[:2])


def _places():
    """The modules whose `parse_response` / `ResponseParser` names the drop-in replaces, with
    the names they use."""
    import transformers.tokenization_utils_base as base
    import transformers.utils.chat_parsing as package
    import transformers.utils.chat_parsing.response_parser as module

    places = [
        (package, "parse_response", "ResponseParser"),
        (module, "parse_response", "ResponseParser"),
        (base, "_template_parse_response", "ResponseParser"),
    ]
    # Serving imports `ResponseParser` by name; replaced there when it is loaded.
    for name in ("transformers.cli.serving.utils", "transformers.cli.serving.model_manager"):
        served = sys.modules.get(name)
        if served is not None and hasattr(served, "ResponseParser"):
            places.append((served, None, "ResponseParser"))
    return places


def original_api(reference: str):
    """transformers' own `(parse_response, ResponseParser)`, when the installed transformers is
    `reference` (else `None`): where rtbench hands inputs it does not model."""
    try:
        version = _version_of_transformers()
    except ImportError:
        return None
    if version != reference:
        return None
    import transformers.utils.chat_parsing.response_parser as module

    originals = {(id(m), attr): value for m, attr, value in _saved}
    parse = originals.get((id(module), "parse_response"), module.parse_response)
    parser = originals.get((id(module), "ResponseParser"), module.ResponseParser)
    return parse, parser


def install(reference: str | None = None) -> str:
    """Routes transformers' response parsing through rtbench; returns the reference version
    followed ("5.24" or "5.25"): the installed transformers' unless `reference` says which."""
    version = _version_of_transformers()
    if reference is None:
        if version not in ("5.24", "5.25"):
            raise ValueError(
                f"rtbench follows transformers 5.24 and 5.25, and transformers {version} is installed: "
                'pass install(reference="5.24") or install(reference="5.25") to choose the semantics'
            )
        reference = version
    parse, parser = _api.api(reference)
    if _active:
        uninstall()
    for module, parse_name, parser_name in _places():
        for name, value in ((parse_name, parse), (parser_name, parser)):
            if name is None:
                continue
            _saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
    _active.append(reference)
    return reference


def uninstall() -> None:
    """Puts transformers' own response parsing back."""
    while _saved:
        module, name, value = _saved.pop()
        setattr(module, name, value)
    _active.clear()


def installed_reference() -> str | None:
    """The reference version the drop-in follows, or `None` when it is not installed."""
    return _active[-1] if _active else None


@contextlib.contextmanager
def installed(reference: str | None = None):
    """`install()` for the duration of a `with` block (the previous state comes back after it)."""
    previous = installed_reference()
    try:
        yield install(reference)
    finally:
        uninstall()
        if previous is not None:
            install(previous)
