"""Evaluation protocols: one registered :class:`Protocol` spec per ``--protocol`` name.

Built in: ``zero-shot`` (the default), ``icl-sd`` and ``icl-dd`` (in-context learning, paper §6;
:mod:`.in_context`), and the authors' own ``paper``, ``paper-icl-sd`` and ``paper-icl-dd``
(their strings, their demonstration choice, generated answers; :mod:`.authors`). The engine, the
CLI, the Space and the reports ask the spec (``get_protocol(name).in_context``, ...), never the
name. Adding a protocol: build a :class:`Protocol` and :func:`register_protocol` it. The prompt
templates the protocols ask with have their own registry (:mod:`.templates`).
"""

from __future__ import annotations

from .authors import PAPER, PAPER_ICL_DD, PAPER_ICL_SD
from .demonstrations import ORDERS, check_order, partner_config
from .in_context import ICL_DD, ICL_SD, ZERO_SHOT
from .spec import Protocol, ProtocolPlan
from .templates import DEFAULT_TEMPLATE, PromptTemplate, get_template, register_template

DEFAULT_PROTOCOL = ZERO_SHOT.name
"""The protocol of a run that names none."""

PROTOCOLS: dict[str, Protocol] = {}
"""Protocol name -> spec, built-in first, then registered."""


def register_protocol(spec: Protocol) -> Protocol:
    """Make ``spec`` available by name (``--protocol NAME``); returns it."""
    PROTOCOLS[spec.name] = spec
    return spec


def unregister_protocol(name: str) -> None:
    """Remove a protocol added with :func:`register_protocol`."""
    PROTOCOLS.pop(name, None)


def protocol_names() -> list[str]:
    """Every available protocol name, built-in first."""
    return list(PROTOCOLS)


def get_protocol(name: str) -> Protocol:
    """The spec of protocol ``name`` (a ValueError names an unknown one and the choices)."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}: use one of {', '.join(PROTOCOLS)}")
    return PROTOCOLS[name]


for _builtin in (ZERO_SHOT, ICL_SD, ICL_DD, PAPER, PAPER_ICL_SD, PAPER_ICL_DD):
    register_protocol(_builtin)

__all__ = [
    "DEFAULT_PROTOCOL",
    "DEFAULT_TEMPLATE",
    "ORDERS",
    "PROTOCOLS",
    "PromptTemplate",
    "Protocol",
    "ProtocolPlan",
    "check_order",
    "get_protocol",
    "get_template",
    "partner_config",
    "protocol_names",
    "register_protocol",
    "register_template",
    "unregister_protocol",
]
