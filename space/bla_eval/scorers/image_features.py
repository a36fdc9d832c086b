"""Which of a processor's outputs a model's image-feature method takes, read from the method.

The fast path of the generative kind (``prefix_cache``) calls the model's own
``get_image_features`` once per image and hands the result to the forward. That call is bound to
the processor's outputs by what the method declares: a parameter takes the output of its name, or
the output of an old name that the method or the model's forward renames to it (transformers'
``deprecate_kwarg``: Video-LLaVA's ``pixel_values_images``, Fuyu's ``image_patches``); a method
that only passes ``*args, **kwargs`` on to its base model's (MiniCPM-V 4.6) is read through to
that one. A call that cannot be bound so (a required input the processor does not give, a
method that declares no inputs) is :class:`UnboundFeatures`: the scorer then takes the plain
path and says why.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

METHOD = "get_image_features"
VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class UnboundFeatures(RuntimeError):
    """The image-feature call cannot be matched to the processor's outputs."""


def declared(method: Callable) -> list[inspect.Parameter]:
    """The named parameters of ``method`` (its ``*args`` and ``**kwargs`` left out)."""
    params = inspect.signature(method).parameters.values()
    return [p for p in params if p.kind not in VARIADIC]


def feature_method(model: Any) -> Callable | None:
    """The model's ``get_image_features`` that declares its inputs: the outer class's, else its
    base model's (Janus, DeepSeek-VL, PerceptionLM and Emu3 keep it there; MiniCPM-V 4.6's outer
    one passes ``*args, **kwargs`` on to it), or None."""
    found = None
    for owner in (model, getattr(model, "model", None)):
        method = getattr(owner, METHOD, None)
        if callable(method):
            if declared(method):
                return method
            found = found or method
    return found


def wrappers(fn: Any) -> Iterator[Any]:
    """``fn`` and every function it wraps (``functools.wraps``' ``__wrapped__`` chain)."""
    fn = getattr(fn, "__func__", fn)
    while fn is not None:
        yield fn
        fn = getattr(fn, "__wrapped__", None)


def renames(fn: Any) -> dict[str, str]:
    """New name -> old name of each input that ``fn`` renames (transformers' ``deprecate_kwarg``
    wrappers, read from their closures)."""
    out: dict[str, str] = {}
    for layer in wrappers(fn):
        code, closure = getattr(layer, "__code__", None), getattr(layer, "__closure__", None)
        if code is None or not closure or not code.co_filename.endswith("deprecation.py"):
            continue
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in closure), strict=True))
        old, new = cells.get("old_name"), cells.get("new_name")
        if isinstance(old, str) and isinstance(new, str):
            out.setdefault(new, old)
    return out


@dataclass(frozen=True)
class FeatureCall:
    """The model's image-feature method and, per parameter, the processor output it takes."""

    method: Callable
    inputs: dict[str, str]

    def kwargs(self, enc: dict[str, Any]) -> dict[str, Any]:
        """The method's keyword arguments from one processor output."""
        return {param: enc[name] for param, name in self.inputs.items()}


class FeatureBinder:
    """Binds ``model``'s image-feature method to processor outputs (:meth:`bind`)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.method = feature_method(model)
        forwards = [model.forward]
        base = getattr(model, "model", None)
        if base is not None and callable(getattr(base, "forward", None)):
            forwards.append(base.forward)
        self.aliases: dict[str, str] = {}
        for fn in (self.method, *forwards):
            if fn is not None:
                for new, old in renames(fn).items():
                    self.aliases.setdefault(new, old)

    def bind(self, enc: dict[str, Any]) -> FeatureCall:
        """The call for processor output ``enc`` (of one image and prompt);
        :class:`UnboundFeatures` says what does not fit."""
        if self.method is None:
            raise UnboundFeatures(f"the model has no {METHOD}")
        params = declared(self.method)
        if not params:
            raise UnboundFeatures(f"{METHOD} takes only *args, **kwargs: its inputs are unknown")
        inputs: dict[str, str] = {}
        for p in params:
            name = p.name if p.name in enc else self.aliases.get(p.name)
            if name in enc:
                inputs[p.name] = name
            elif p.default is inspect.Parameter.empty:
                given = ", ".join(sorted(enc))
                raise UnboundFeatures(f"{METHOD} needs {p.name!r}; the processor gives {given}")
        return FeatureCall(self.method, inputs)
