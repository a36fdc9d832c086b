"""The model kind of a resolved model, from the registered scorer classes' rules over the one
record of what the model's files declare (:class:`~.capabilities.Capabilities`): name rules
first, then the transformers config, read once, in registry order."""

from __future__ import annotations

from .capabilities import Capabilities
from .registry import KIND_INFO, kinds, remote_kinds, scorer_class, scorer_classes


def detect(model: Capabilities, trust_remote_code: bool = False) -> tuple[str, Capabilities]:
    """(kind, the record with its transformers config where one was read) of a local path or
    Hub id: a name rule decides without the config, else the config read once (an error names
    the model and the kinds)."""
    classes = scorer_classes().values()
    for cls in classes:
        if cls.matches_name(model):
            return cls.kind, model
    model = model.with_config(trust_remote_code)
    refuse_out_of_scope(model)
    for cls in classes:
        if cls.matches_config(model):
            return cls.kind, model
    raise ValueError(
        f"unknown model kind for {model.path!r} "
        f"(model_type={getattr(model.config, 'model_type', '')!r}, "
        f"architectures={sorted(model.architectures)}); pass --kind one of {', '.join(kinds())}"
    )


def check_kind_fits(
    model: Capabilities, kind: str, trust_remote_code: bool = False
) -> Capabilities:
    """Refuse an explicit ``--kind`` that another kind's rules claim the model for and its own
    rules do not (e.g. ``--kind itm`` on a CLIP model), before anything is loaded. Returns the
    record, with the transformers config when it was read. A model whose config cannot be
    read, or that no rule claims, is left to the loader."""
    if scorer_class(kind).matches_name(model):
        return model
    classes = scorer_classes().values()
    named = next((c.kind for c in classes if c.matches_name(model)), None)
    if named is None:
        try:
            model = model.with_config(trust_remote_code)
        except ValueError:
            return model
        refuse_out_of_scope(model)
        if scorer_class(kind).matches_config(model):
            return model
        detected = next((c.kind for c in classes if c.matches_config(model)), None)
        if detected is None:
            return model
        names = ", ".join(sorted(model.architectures)) or "no architectures"
        what = f"{getattr(model.config, 'model_type', '?')} model ({names})"
    else:
        detected, what = named, f"{named} model"
    raise ValueError(
        f"--kind {kind} does not fit {model.path!r}: it is a {what}, of kind {detected!r}; "
        f"pass --kind {detected} or leave --kind out"
    )


def check_endpoint(kind: str, endpoint: str | None) -> None:
    """A remote kind needs an endpoint, and an endpoint needs a remote kind (ValueError)."""
    remote = KIND_INFO[kind].remote if kind in KIND_INFO else False
    if remote and not endpoint:
        raise ValueError(f"model kind {kind!r} needs --endpoint URL (the API base of its server)")
    if endpoint and not remote:
        raise ValueError(
            f"--endpoint is for model kind {' or '.join(map(repr, remote_kinds()))}; kind "
            f"{kind!r} loads the model itself"
        )


def refuse_out_of_scope(model: Capabilities) -> None:
    """A ValueError in one line for a model that no kind scores (:func:`out_of_scope`)."""
    note = out_of_scope(model)
    if note:
        raise ValueError(f"model {model.path!r}: {note}")


def out_of_scope(model: Capabilities) -> str | None:
    """Why no kind scores a model, in one line (None: no known reason): late-interaction
    retrieval (many vectors per image and query, compared by MaxSim: ColPali, ColQwen2)."""
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(model.config, "model_type", "")
    retrieval = any(a.endswith("ForRetrieval") for a in model.architectures)
    if retrieval or model_type in auto.MODEL_FOR_RETRIEVAL_MAPPING_NAMES:
        return (
            f"{model_type} is a late-interaction retrieval model (many vectors per image and "
            "query, compared by MaxSim): no kind scores it"
        )
    return None
