"""Evaluation protocols: one registered :class:`Protocol` spec per ``--protocol`` name.

Built in: ``zero-shot`` (the default), ``icl-sd`` and ``icl-dd`` (in-context learning, paper §6;
:mod:`.in_context`), and the authors' own ``paper``, ``paper-icl-sd`` and ``paper-icl-dd``
(their strings, their demonstration choice, generated answers; :mod:`.authors`). The engine, the
CLI, the Space and the reports ask the spec (``get_protocol(name).in_context``, ...), never the
name. Adding a protocol: build a :class:`Protocol` and :func:`register_protocol` it. The prompt
templates the protocols ask with have their own registry (:mod:`.templates`).
"""

from __future__ import annotations

from bla_metric.registry import Registry

from .authors import PAPER, PAPER_ICL_DD, PAPER_ICL_SD
from .demonstrations import ORDERS, check_order, partner_config
from .in_context import ICL_DD, ICL_SD, ZERO_SHOT
from .spec import Protocol, ProtocolPlan
from .templates import DEFAULT_TEMPLATE, PromptTemplate, get_template, register_template

DEFAULT_PROTOCOL = ZERO_SHOT.name
"""The protocol of a run that names none."""

PROTOCOLS: Registry[Protocol] = Registry(
    "protocol", (ZERO_SHOT, ICL_SD, ICL_DD, PAPER, PAPER_ICL_SD, PAPER_ICL_DD)
)
"""Protocol name -> spec, built-in first, then registered (``--protocol NAME``)."""
register_protocol = PROTOCOLS.register
unregister_protocol = PROTOCOLS.unregister
protocol_names = PROTOCOLS.names
get_protocol = PROTOCOLS.require

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
