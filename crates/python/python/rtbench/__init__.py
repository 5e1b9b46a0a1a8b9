"""rtbench: transformers' response parsing on rtbench's engine.

    import rtbench
    message = rtbench.parse_response(generation, template, prefix=prompt)
    parser = rtbench.ResponseParser(template, prefix=prompt)

The same arguments, results, events and exceptions as `transformers.utils.chat_parsing` (5.25;
`rtbench.api("5.24")` gives 5.24's), much faster. `rtbench.install()` makes transformers itself
(`tokenizer.parse_response`, `tokenizer.get_response_parser`, `chat_parsing.parse_response` and
`ResponseParser`) use it; `rtbench.uninstall()` undoes that, and `with rtbench.installed():`
does both around a block.
"""

from ._api import ResponseParser, ResponseParser524, api, parse_response, parse_response_524
from ._errors import RtbenchError, error
from ._install import install, installed, installed_reference, uninstall
from . import corpus

# The 5.24 class is the reference's `ResponseParser` too, by name.
ResponseParser524.__name__ = ResponseParser524.__qualname__ = "ResponseParser"

__all__ = [
    "ResponseParser",
    "RtbenchError",
    "api",
    "corpus",
    "error",
    "install",
    "installed",
    "installed_reference",
    "parse_response",
    "uninstall",
]
