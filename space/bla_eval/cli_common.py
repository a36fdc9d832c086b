"""What every command line of the project shares: one-line errors with exit code 2, and options
derived from the fields of a settings dataclass.

Every entry point (``bla-eval`` and its subcommands, ``bla-finetune``, ``python -m builders ...``)
parses with :class:`OneLineParser` and runs with :func:`run_guarded`, so a bad argument, path or
record prints one line ``<prog>: error: <message>`` on stderr and exits with 2 (``--debug``: the
traceback instead); a package of a missing extra is named with the extra to install.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import typing
import unicodedata
from collections.abc import Callable
from typing import Any, NoReturn

from .extras import install_hint
from .redact import ScrubbedStream, shown

USER_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, ImportError)
"""Exceptions that carry a message for the user: a bad argument or record (``ValueError``), a
path, file or connection (``OSError``), an optional package that is not installed."""

EXIT_USAGE = 2
"""Exit code of every refused argument, path or record (argparse's own code for bad usage)."""

EXIT_BROKEN_PIPE = 141
"""Exit code when stdout's reader went away (128 + SIGPIPE, as a shell reports it)."""


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line naming the bad value (exit code 2).

    Its subcommand parsers are of the same class, so ``prog sub: error: ...`` reads the same.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(shown(message).split())}\n")

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """As argparse's, but unknown arguments are named by the subcommand that was chosen."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self.chosen(parsed).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def chosen(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The (sub)command parser that ``parsed`` went through last (``self`` without one)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(getattr(parsed, action.dest, None))
                if isinstance(sub, OneLineParser):
                    return sub.chosen(parsed)
        return self


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    return check_range("", value, 1, math.inf, argparse.ArgumentTypeError)


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse type: a whole number from ``low`` to ``high`` (the documented maximum of a count
    that scales work or memory)."""
    return _bounded(int, low, high)


def bounded_float(low: float, high: float) -> Callable[[str], float]:
    """argparse type: a finite number from ``low`` to ``high`` (the documented maximum of a
    time or amount a user gives; ``1e308`` or ``inf`` is refused, not passed on)."""
    return _bounded(float, low, high)


def _bounded(parse: type, low: float, high: float) -> Callable[[str], Any]:
    """argparse type: ``parse(text)`` checked by :func:`check_range` (a float named as typed)."""

    def checked(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid {parse.__name__} value: {text[:40]!r}"
            ) from None
        given = None if parse is int else text[:40]
        return check_range("", value, low, high, argparse.ArgumentTypeError, parse is int, given)

    return checked


def check_range(
    name: str,
    value: object,
    low: float,
    high: float,
    error: type[Exception] = ValueError,
    whole: bool = True,
    given: str | None = None,
) -> Any:
    """``value`` when it is a whole number (``whole``; else a finite number) from ``low`` to
    ``high``; else ``error`` naming ``name`` (when given), the value (``given``: as the user
    typed it) and the bounds."""
    what = f"{name} must" if name else "must"
    shown = repr(value) if given is None else given
    if not whole:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not (number and math.isfinite(value) and low <= value <= high):  # type: ignore[operator]
            raise error(f"{what} be a number from {_bound(low)} to {_bound(high)}, got {shown}")
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{what} be a whole number, got {shown}")
    if value < low:
        raise error(f"{what} be at least {low}, got {shown}")
    if value > high:
        raise error(f"{what} be at most {high}, got {shown}")
    return value


def _bound(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _counts(low: float, high: float) -> bool:
    """Whether bounds bound a count (both ``int``), whose values are whole numbers."""
    return isinstance(low, int) and isinstance(high, int)


def bounded(low: float, high: float) -> dict[str, Any]:
    """Metadata of a settings field holding a number from ``low`` to ``high``: the bounds,
    which :func:`check_field` reads, and the argparse type that applies them (whole numbers
    when both bounds are ``int``)."""
    parse = bounded_int if _counts(low, high) else bounded_float
    return {"bounds": (low, high), "type": parse(low, high)}


def check_field(settings: type, name: str, value: Any) -> Any:
    """``value`` when it is within the bounds of the field ``name`` of the dataclass
    ``settings`` (:func:`bounded`; None where None is the field's default); else a ValueError
    naming the field."""
    f = next(f for f in dataclasses.fields(settings) if f.name == name)
    bounds = f.metadata.get("bounds")
    if bounds is None or (value is None and f.default is None):
        return value
    low, high = bounds
    return check_range(name, value, low, high, whole=_counts(low, high))


def check_bounds(settings: Any) -> None:
    """ValueError naming the first field of the dataclass instance ``settings`` outside its
    bounds (:func:`check_field`)."""
    for f in dataclasses.fields(settings):
        check_field(type(settings), f.name, getattr(settings, f.name))


HIDDEN_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
"""Unicode categories a display name may not hold: control and format characters (the bidi
overrides such as U+202E reorder what a table shows), the surrogates that stand for bytes that
are no UTF-8 (an argument decoded with ``surrogateescape``), private and unassigned code points,
and line and paragraph separators."""


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be shown as a name in a table, or None: the first character of a
    :data:`HIDDEN_CATEGORIES` category, named by its code point (and position)."""
    for at, char in enumerate(value):
        category = unicodedata.category(char)
        if category in HIDDEN_CATEGORIES:
            code = ord(char)
            what = (
                f"the byte 0x{code - 0xDC00:02x}, which is not UTF-8"
                if 0xDC80 <= code <= 0xDCFF
                else f"the character U+{code:04X} ({unicodedata.name(char, category)})"
            )
            return f"holds {what} at position {at + 1}: give a name of printable characters"
    return None


def display_text(text: str) -> str:
    """argparse type: a name shown in tables and plots (``--name``), printable Unicode only
    (:func:`text_problem`)."""
    problem = text_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (its type name when it has none); an OS error names
    its file first (``PATH: No space left on device``)."""
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        return " ".join(f"{err.filename}: {err.strerror}".split())
    return " ".join(str(err).split()) or type(err).__name__


def run_guarded(
    fn: Callable[[], int],
    debug: bool,
    prog: str,
    errors: tuple[type[BaseException], ...] = USER_ERRORS,
    extra: str | None = None,
) -> int:
    """Run ``fn``; one of ``errors`` prints one line and returns 2 (re-raised with ``debug``).

    A missing package of an extra names the extra to install (``extra``, else the first of the
    project's extras that installs it). What ``fn`` prints on stdout and stderr is the place its
    output leaves the process: known secrets and control sequences are removed there
    (``bla_eval.redact.ScrubbedStream``)."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbedStream(sys.stdout), ScrubbedStream(sys.stderr)
    try:
        return fn()
    except BrokenPipeError:  # the reader of stdout stopped (``| head``): nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except errors as err:
        if debug:
            raise
        hint = install_hint(err, extra) if isinstance(err, ModuleNotFoundError) else None
        say(f"{prog}: error: {hint or one_line(err)}")
        return EXIT_USAGE
    except KeyboardInterrupt as err:
        say(f"{prog}: interrupted" + (f"; {err}" if str(err) else ""))
        return 130
    finally:
        sys.stdout, sys.stderr = streams


def say(line: str) -> None:
    """``line`` on stderr in one write (secrets and control sequences removed, whitespace made
    single spaces): the processes of a multi-process run share the stream, and a line written in
    two parts (text, then its newline) can be split by another's."""
    sys.stderr.write(" ".join(shown(line).split()) + "\n")
    sys.stderr.flush()


def option(default: Any = None, help: str = "", **cli: Any) -> Any:
    """A dataclass field that a command line sets: its default (``MISSING``: required), help
    line and the metadata :func:`add_field_options` reads (``flag``, ``type``, ``choices`` ...)."""
    return dataclasses.field(default=default, metadata={"help": help, **cli})


def command_parser(prog: str, description: str, *settings: type, **kwargs: Any) -> OneLineParser:
    """The parser of a command: the options of the dataclasses ``settings``, and ``--debug``."""
    parser = OneLineParser(prog=prog, description=description, **kwargs)
    add_field_options(parser, *settings, Debugging)
    return parser


def field_like(settings: type, name: str, **changes: Any) -> Any:
    """A dataclass field declared as the field ``name`` of ``settings`` (its default and metadata),
    with ``changes``: ``default`` and metadata keys (``help`` ...) that differ."""
    (same,) = (f for f in dataclasses.fields(settings) if f.name == name)
    default = changes.pop("default", same.default)
    return dataclasses.field(default=default, metadata={**same.metadata, **changes})


@dataclasses.dataclass(frozen=True)
class Debugging:
    """The switch every command has (:func:`run_guarded`'s ``debug``)."""

    debug: bool = option(False, "show the traceback of an error instead of its one line")


def add_field_options(
    parser: argparse.ArgumentParser,
    *settings: type,
    suppress: bool = False,
) -> None:
    """One argument per field of each dataclass of ``settings``, read from its type and metadata.

    Metadata: ``help``; ``flag`` (default ``--`` + the name with dashes; a tuple for several
    flags; a name without dashes makes a positional argument); ``type`` (default: from the
    annotation, ``int``/``float``/``str``); ``choices`` (a sequence, or a callable giving one,
    called now); ``choice_help`` (a callable giving choice -> one line, added to the help);
    ``nargs``, ``action`` and ``metavar`` as argparse's; ``parsed`` (the value of an option not
    given, where it is not the field's default: ``None`` for a tuple field, say). A field without
    a default is required, a ``bool`` field is a switch, a ``tuple`` field takes one or more
    values. The destination is the field name. ``suppress``: an option not given sets nothing
    (``argparse.SUPPRESS``), so a subcommand's copy of its parent's option keeps the parent's.
    """
    for cls in settings:
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            flags, kwargs = _argument(f, hints[f.name])
            if suppress:
                kwargs["default"] = argparse.SUPPRESS
            parser.add_argument(*flags, **kwargs)


def _argument(f: dataclasses.Field, hint: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The flags (or positional name) and ``add_argument`` keywords of the field ``f``."""
    meta = f.metadata
    flag = meta.get("flag", "--" + f.name.replace("_", "-"))
    flags = (flag,) if isinstance(flag, str) else tuple(flag)
    positional = not flags[0].startswith("-")
    kwargs: dict[str, Any] = {"help": _help(f)}
    if not positional:
        kwargs["dest"] = f.name
    if f.default is not dataclasses.MISSING:
        kwargs["default"] = f.default
    elif not positional:
        kwargs["required"] = True
    if hint is bool and "action" not in meta:
        return flags, {**kwargs, "action": "store_false" if f.default is True else "store_true"}
    kwargs.update({key: meta[key] for key in ("nargs", "action", "metavar") if key in meta})
    if typing.get_origin(hint) is tuple:
        if "default" in kwargs:
            kwargs["default"] = list(kwargs["default"])
        if "action" not in kwargs:
            kwargs.setdefault("nargs", "+")
    if "parsed" in meta:
        kwargs["default"] = meta["parsed"]
    kwargs["type"] = meta.get("type") or _scalar_type(hint)
    choices = meta.get("choices")
    if choices is not None:
        kwargs["choices"] = tuple(choices() if callable(choices) else choices)
    elif not positional:
        long = next((name for name in flags if name.startswith("--")), flags[0])
        kwargs.setdefault("metavar", long.lstrip("-").replace("-", "_").upper())
    return flags, kwargs


def field_values(settings: type, args: argparse.Namespace) -> dict[str, Any]:
    """The values of the dataclass ``settings``' fields in ``args`` (parsed with
    :func:`add_field_options`) as tuples; a ``tuple[str, ...]`` field's values may also be
    comma-separated."""
    hints = typing.get_type_hints(settings)
    values = {}
    for f in dataclasses.fields(settings):
        value = getattr(args, f.name)
        if typing.get_origin(hints[f.name]) is tuple:
            strings = typing.get_args(hints[f.name])[0] is str
            value = split_values(value or ()) if strings else tuple(value or ())
        values[f.name] = value
    return values


def split_values(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """``["ap", "co"]`` and ``["ap,co"]`` both -> ``("ap", "co")``."""
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _help(f: dataclasses.Field) -> str:
    """A field's help line, its default and its choices' own lines (``%`` escaped for argparse)."""
    text = f.metadata.get("help", "")
    shown = f.default is not dataclasses.MISSING and not isinstance(f.default, bool)
    if shown and f.default not in (None, ()):
        text += f" (default: {f.default})"
    choice_help = f.metadata.get("choice_help")
    if choice_help is not None:
        text += ": " + "; ".join(f"{k} = {line}" for k, line in choice_help().items())
    return text.replace("%", "%%")


def _scalar_type(hint: Any) -> Callable[[str], Any]:
    """``int``, ``float`` or ``str`` from an annotation such as ``int | None``."""
    options = typing.get_args(hint) if typing.get_origin(hint) is not None else (hint,)
    for candidate in (int, float):
        if candidate in options:
            return candidate
    return str
