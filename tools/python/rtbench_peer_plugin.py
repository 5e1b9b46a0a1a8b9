"""pytest plugin for the peer suite: installs rtbench's drop-in before the tests are collected.

The reference's test module imports `parse_response` and `ResponseParser` from
`transformers.utils.chat_parsing` at import time, so the drop-in has to be in place before
collection (`pytest_configure` runs before it). `RTBENCH_PEER_REFERENCE` chooses the reference
version (default: the installed transformers').
"""

import os


def pytest_configure(config):
    import rtbench

    reference = rtbench.install(os.environ.get("RTBENCH_PEER_REFERENCE") or None)
    config._rtbench_reference = reference


def pytest_collection_modifyitems(session, config, items):
    """Records which parser the test modules reach (`RTBENCH_PEER_MARK` names the file), so the
    suite can tell that the package, not the reference, ran."""
    import rtbench

    mark = os.environ.get("RTBENCH_PEER_MARK")
    if not mark:
        return
    modules = {item.module for item in items if getattr(item, "module", None) is not None}
    routed = all(
        getattr(m, "parse_response", rtbench.parse_response) in (rtbench.parse_response, rtbench.parse_response_524)
        and getattr(m, "ResponseParser", rtbench.ResponseParser) in (rtbench.ResponseParser, rtbench.ResponseParser524)
        for m in modules
    )
    with open(mark, "w") as f:
        f.write(f"{config._rtbench_reference} {'routed' if routed else 'unrouted'}")


def pytest_report_header(config):
    return f"rtbench drop-in installed (reference {getattr(config, '_rtbench_reference', '?')})"
