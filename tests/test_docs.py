"""README.md and docs/*.md say what the code does: every command they show parses as written.

A command is a shell line (in a fenced block without a language or with ``bash``/``sh``/
``shell``/``console``) that runs ``bla-eval``, ``bla-finetune`` or ``python -m`` one of the
project's modules (``builders``, ``bla_eval...``, ``bla_metric...``; also after a launcher:
``torchrun ... -m bla_eval``). Each is parsed by the command's real argument parser: the public
``build_parser()`` where there is one, else the command's entry point with one unknown option
appended, which must be the only thing the parser refuses (so parsing stops before anything
runs). Each command's ``--help`` runs; options tables marked ``<!-- options: COMMAND -->`` list
exactly the options of that command; commands quoted in the prose use only existing options; and
relative links point at files (and headings) that exist.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = (REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")))
SHELL_FENCES = ("", "bash", "sh", "shell", "console")
PROJECT_MODULES = ("builders", "bla_eval", "bla_metric")
TEST_COMMAND = "bash .ci/setup && .venv/bin/python -m pytest"
SENTINEL = "--unknown-option-of-test-docs"
FILE_SUFFIXES = (".json", ".jsonl", ".zip", ".gguf", ".txt", ".yaml", ".csv")
PUBLIC_PARSERS = {
    "bla-eval": "bla_eval.cli:build_parser",
    "bla-finetune": "bla_eval.finetune.cli:build_parser",
    "python -m builders": "builders.__main__:build_parser",
}
"""Command -> ``module:function`` that builds its argument parser."""


@dataclass(frozen=True)
class Command:
    """One project command found in a document."""

    program: str  # "bla-eval", "bla-eval analyze", "python -m builders", "python -m <module>"
    argv: tuple[str, ...]  # what the program's parser reads (builders: subcommand first)
    source: str  # "docs/x.md:12"

    @property
    def help_name(self) -> str:
        """The program, with the builders' subcommand when there is one."""
        if self.program == "python -m builders" and self.argv and not self.argv[0].startswith("-"):
            return f"{self.program} {self.argv[0]}"
        return self.program


# ---- reading the documents -------------------------------------------------------------------


def shell_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, logical line) of the shell blocks of ``path``; ``\\`` continuations joined."""
    fence, pending, start = None, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = stripped[3:].strip() if fence is None else None
            continue
        if fence not in SHELL_FENCES:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield start, pending + stripped
        pending = ""


def prose_spans(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the inline code spans outside fenced blocks."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield from ((number, span) for span in re.findall(r"`([^`]+)`", line))


def segments(line: str) -> Iterator[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``;``, ``|``), comments off."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    current: list[str] = []
    for token in lexer:
        if set(token) <= set("&|;()<>"):
            yield current
            current = []
        else:
            current.append(token)
    yield current


def command_of(tokens: list[str], source: str) -> Command | None:
    """The project command that ``tokens`` run, or None for any other program."""
    while tokens and re.fullmatch(r"[A-Za-z_]\w*=.*", tokens[0]):
        tokens = tokens[1:]  # VAR=value prefixes
    if not tokens:
        return None
    head = tokens[0].rsplit("/", 1)[-1]
    if head in ("bla-eval", "bla-finetune"):
        return _with_subcommand(head, tokens[1:], source)
    if "-m" not in tokens[:-1]:
        return None
    module = tokens[tokens.index("-m") + 1]
    rest = tokens[tokens.index("-m") + 2 :]
    if module.split(".")[0] not in PROJECT_MODULES:
        return None
    if module == "bla_eval":
        return _with_subcommand("bla-eval", rest, source)
    return Command(f"python -m {module}", tuple(rest), source)


def _with_subcommand(program: str, argv: list[str], source: str) -> Command:
    from bla_eval.cli import SUBCOMMANDS

    if program == "bla-eval" and argv and argv[0] in SUBCOMMANDS:
        return Command(f"bla-eval {argv[0]}", tuple(argv[1:]), source)
    return Command(program, tuple(argv), source)


def commands(spans: Callable[[Path], Iterator[tuple[int, str]]]) -> list[Command]:
    """Every project command in ``spans`` of every document."""
    found = []
    for path in DOC_FILES:
        for number, text in spans(path):
            source = f"{path.relative_to(REPO_ROOT)}:{number}"
            for tokens in segments(text):
                command = command_of(tokens, source)
                if command is not None:
                    found.append(command)
    return found


BLOCK_COMMANDS = commands(shell_lines)
PROSE_COMMANDS = commands(prose_spans)
PROGRAMS = sorted({c.help_name for c in BLOCK_COMMANDS + PROSE_COMMANDS})


# ---- running the commands' parsers -----------------------------------------------------------


def entry_point(program: str) -> Callable[[list[str]], object]:
    """The function that ``program`` runs with its arguments (its ``main(argv)``)."""
    if program in ("bla-eval", "python -m bla_eval"):
        return importlib.import_module("bla_eval.cli").main
    if program.startswith("bla-eval "):
        return importlib.import_module("bla_eval.cli").subcommand(program.split()[1])
    if program == "bla-finetune":
        return importlib.import_module("bla_eval.finetune.cli").main
    module = program.removeprefix("python -m ").split()[0]
    if module == "builders":
        module = "builders.__main__"
    return importlib.import_module(module).main


def call(fn: Callable[[], object]) -> tuple[int | str | None, str, str]:
    """Exit code (None when ``fn`` returned), stdout and stderr of ``fn()``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            fn()
        except SystemExit as exit_:
            return exit_.code, out.getvalue(), err.getvalue()
    return None, out.getvalue(), err.getvalue()


@cache
def help_text(program: str) -> str:
    """The ``--help`` output of ``program`` (run through its entry point)."""
    argv = program.split()[3:] if program.startswith("python -m builders ") else []
    code, out, err = call(lambda: entry_point(program)([*argv, "--help"]))
    assert code == 0 and out.startswith("usage:"), f"{program} --help: exit {code}\n{out}{err}"
    return out


def options(program: str) -> set[str]:
    """The long options ``program``'s help lists."""
    return set(re.findall(r"(?<![\w-])--[a-z0-9][\w-]*", help_text(program)))


def parse_error(command: Command) -> str | None:
    """Why the command's parser refuses its arguments, or None when it accepts them."""
    if command.program in PUBLIC_PARSERS:
        module, function = PUBLIC_PARSERS[command.program].split(":")
        parser = getattr(importlib.import_module(module), function)()
        code, _, err = call(lambda: parser.parse_args(list(command.argv)))
        return None if code is None else f"exit {code}: {err.strip()}"
    code, _, err = call(lambda: entry_point(command.program)([*command.argv, SENTINEL]))
    if code is None:
        return "the command ran: its parser did not refuse an unknown option"
    accepted = code == 2 and re.search(rf"unrecognized arguments: {SENTINEL}\s*$", err.strip())
    return None if accepted else f"exit {code}: {err.strip()}"


# ---- tests -----------------------------------------------------------------------------------


def test_the_documents_show_commands():
    """The reader finds the commands (a broken reader would pass every test below)."""
    programs = {c.program for c in BLOCK_COMMANDS}
    assert len(BLOCK_COMMANDS) >= 30, BLOCK_COMMANDS
    assert {"bla-eval", "bla-finetune", "python -m builders", "bla-eval analyze"} <= programs


def test_every_command_and_subcommand_is_shown():
    from bla_eval.cli import SUBCOMMANDS

    from builders.__main__ import SUBCOMMAND_MODULES

    shown = {c.help_name for c in BLOCK_COMMANDS}
    expected = {"bla-eval", "bla-finetune", *(f"bla-eval {name}" for name in SUBCOMMANDS)}
    builders = ("release", "publish", *SUBCOMMAND_MODULES)
    expected |= {f"python -m builders {name}" for name in builders}
    assert not expected - shown, f"no example command of {sorted(expected - shown)}"


def test_readme_keeps_the_test_command_and_is_a_landing_page():
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert TEST_COMMAND in readme.splitlines()
    assert TEST_COMMAND in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 10_500
    assert "site-packages" not in readme


def make_paths(argv: tuple[str, ...], root: Path) -> None:
    """Create under ``root`` each relative path the arguments name (a file when it has a file
    suffix, else a folder): the files a reader brings, for parsers that check paths exist."""
    for arg in argv:
        if (
            arg.startswith(("-", "/", "~", "$"))
            or ".." in arg
            or not re.fullmatch(r"[\w./-]+", arg)
        ):
            continue
        path = root / arg
        if path.suffix in FILE_SUFFIXES:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)


@pytest.mark.parametrize("command", BLOCK_COMMANDS, ids=lambda c: c.source)
def test_command_parses_as_written(
    command: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    make_paths(command.argv, tmp_path)
    monkeypatch.chdir(tmp_path)
    error = parse_error(command)
    assert error is None, f"{command.source}: {command.program} {shlex.join(command.argv)}\n{error}"


@pytest.mark.parametrize("program", PROGRAMS)
def test_help_runs(program: str):
    assert options(program) >= {"--help"}


@pytest.mark.parametrize("command", PROSE_COMMANDS, ids=lambda c: c.source)
def test_command_in_prose_uses_existing_options(command: Command):
    used = {a.split("=")[0] for a in command.argv if a.startswith("--")}
    unknown = used - options(command.help_name)
    assert not unknown, f"{command.source}: {command.help_name} has no {', '.join(unknown)}"


def options_tables() -> Iterator[tuple[str, str, set[str]]]:
    """(source, program, options in the first column) of each marked options table."""
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            marker = re.fullmatch(r"<!-- options: (.+) -->", line.strip())
            if not marker:
                continue
            rows = []
            for row in lines[number + 1 :]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            listed = {m for r in rows[2:] for m in re.findall(r"`(--[\w-]+)`", r.split("|")[1])}
            yield f"{path.relative_to(REPO_ROOT)}:{number + 1}", marker.group(1), listed


OPTIONS_TABLES = list(options_tables())


def test_options_tables_are_marked():
    assert {program for _, program, _ in OPTIONS_TABLES} >= {"bla-eval", "bla-finetune"}


@pytest.mark.parametrize(
    "source, program, listed", OPTIONS_TABLES, ids=[t[0] for t in OPTIONS_TABLES]
)
def test_options_table_lists_every_option(source: str, program: str, listed: set[str]):
    module, function = PUBLIC_PARSERS[program].split(":")
    parser = getattr(importlib.import_module(module), function)()
    actual = {s for a in parser._actions for s in a.option_strings if s.startswith("--")}
    actual.discard("--help")
    assert listed == actual, (
        f"{source}: missing {sorted(actual - listed)}, not options {sorted(listed - actual)}"
    )


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


def link_resolves(document: Path, target: str) -> bool:
    """Whether a relative link of ``document`` names an existing file (and heading)."""
    file_part, _, anchor = target.partition("#")
    linked = (document.parent / file_part).resolve() if file_part else document
    if not linked.exists():
        return False
    return not anchor or linked.suffix != ".md" or anchor in anchors(linked)


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_relative_links_resolve(path: Path):
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    broken = [t for t in targets if not re.match(r"[a-z]+:", t) and not link_resolves(path, t)]
    assert not broken, f"{path.name}: {broken}"


@pytest.mark.parametrize(
    "argv",
    [["bla-eval", "--help"], ["bla-finetune", "--help"], ["-m", "builders", "--help"]],
    ids=lambda a: " ".join(a),
)
def test_installed_commands_answer_help(argv: list[str]):
    """The commands as a user types them, in their own process."""
    bin_dir = Path(sys.executable).parent
    command = [sys.executable, *argv] if argv[0] == "-m" else [str(bin_dir / argv[0]), *argv[1:]]
    result = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0 and result.stdout.startswith("usage:"), result.stderr


# ---- each topic once, the Hub names from one module -------------------------------------------

CARDS = (REPO_ROOT / "space" / "README.md", REPO_ROOT / "bla_metric" / "README.md")
HUB_ID = re.compile(r"(?<![\w./-])bla-benchmark/[\w.-]*\w")
"""An id of the project's organisation on the Hub (not the GitHub repo, not the PyPI name)."""


def outside_code_blocks(text: str) -> list[str]:
    """The lines of ``text`` outside fenced blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def repeated(values: list[str]) -> list[str]:
    return sorted({v for v in values if values.count(v) > 1})


def listed_links(lines: list[str]) -> list[str]:
    """The target of the link that opens each list item (``- [title](target)``)."""
    return [m.group(1) for line in lines if (m := re.match(r"\s*[-*] \[[^\]]+\]\(([^)]+)\)", line))]


def headings(lines: list[str]) -> list[str]:
    return [line.lstrip("#").strip() for line in lines if re.match(r"#+ ", line)]


@pytest.mark.parametrize("path", DOC_FILES, ids=lambda p: p.name)
def test_no_page_lists_a_link_or_a_heading_twice(path: Path):
    lines = outside_code_blocks(path.read_text(encoding="utf-8"))
    assert not repeated(listed_links(lines)), f"{path.name} lists a link twice"
    assert not repeated(headings(lines)), f"{path.name} has a heading twice"


def test_the_twice_listed_check_finds_repeats():
    page = ["# A", "- [x](docs/x.md): one", "- [y](docs/y.md)", "- [x again](docs/x.md)", "# A"]
    assert repeated(listed_links(page)) == ["docs/x.md"]
    assert repeated(headings(page)) == ["A"]
    assert not headings(outside_code_blocks("```bash\n# a shell comment\n```"))


def shell_blocks(path: Path) -> list[list[str]]:
    """The lines of each shell block of ``path``, one list per block."""
    blocks, fence = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = stripped[3:].strip() if fence is None else None
            if fence in SHELL_FENCES:
                blocks.append([])
        elif fence in SHELL_FENCES:
            blocks[-1].append(stripped)
    return blocks


BARE_COMMAND = re.compile(r"(python3?|bla-eval|bla-finetune)\b")
"""A command that finds the project only on an activated environment's ``PATH``."""


def unactivated(block: list[str]) -> list[str]:
    """The bare commands that follow ``bash .ci/setup`` in ``block`` before the ``.venv`` it
    creates is activated (they would run another Python, or none)."""
    if "bash .ci/setup" not in block:
        return []
    after = block[block.index("bash .ci/setup") + 1 :]
    activated = False
    bare = []
    for line in after:
        activated = activated or line.startswith(("source .venv/bin/activate", ". .venv/bin/"))
        if BARE_COMMAND.match(line) and not activated:
            bare.append(line)
    return bare


@pytest.mark.parametrize("path", (*DOC_FILES, *CARDS), ids=lambda p: p.name)
def test_a_block_that_sets_up_the_venv_activates_it_before_bare_commands(path: Path):
    """Pasted into a fresh shell, the block runs the project's Python."""
    bare = [line for block in shell_blocks(path) for line in unactivated(block)]
    assert not bare, f"{path.name}: {bare} run before `source .venv/bin/activate`"


def test_the_activation_check_finds_a_bare_command():
    assert unactivated(["bash .ci/setup", "python -m builders release"])
    assert not unactivated(["bash .ci/setup", "source .venv/bin/activate", "bla-eval --help"])
    assert not unactivated(["bash .ci/setup", ".venv/bin/python -m builders release"])


def test_the_readme_main_job_runs_in_the_venv():
    blocks = shell_blocks(REPO_ROOT / "README.md")
    main_job = next(block for block in blocks if "bla-eval --model smollm2" in " ".join(block))
    assert main_job[:2] == ["bash .ci/setup main", "source .venv/bin/activate"]
    test_command = next(block for block in blocks if "-m pytest" in " ".join(block))
    ci = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert test_command == [ci] == ["bash .ci/setup && .venv/bin/python -m pytest"]


def test_pages_and_cards_name_the_hub_ids_of_hub_ids_py(built_dataset: Path):
    from bla_metric import hub_ids

    texts = {
        p.name if p.parent.name == "docs" else str(p.relative_to(REPO_ROOT)): p.read_text(
            encoding="utf-8"
        )
        for p in (*DOC_FILES, *CARDS)
    }
    texts["the dataset card"] = (built_dataset / "README.md").read_text(encoding="utf-8")
    for name, text in texts.items():
        unknown = set(HUB_ID.findall(text)) - hub_ids.ALL_IDS
        assert not unknown, f"{name} names {sorted(unknown)}, not in bla_metric/hub_ids.py"
        assert "<org>" not in text.lower(), f"{name} has a placeholder organisation"
    for name in ("README.md", "the dataset card"):
        assert f'load_dataset("{hub_ids.DATASET}"' in texts[name]
    space_card = texts["space/README.md"]
    for repo in (hub_ids.DATASET, hub_ids.METRIC, hub_ids.SPACE):
        assert repo in space_card
    assert f'evaluate.load("{hub_ids.METRIC}")' in texts["bla_metric/README.md"]
    hub = texts["hub.md"]
    assert all(repo in hub for repo in hub_ids.ALL_IDS)


OUTPUT_OPTIONS = ("--output", "--out")


def test_what_the_documents_have_users_write_in_the_clone_is_ignored_by_git():
    """Every relative folder or file a documented command writes (``--output``, ``--out``)
    is ignored by git in the clone, so ``git status`` shows the user's own changes only."""
    import subprocess

    written = {
        argv[k + 1].split("/")[0]
        for c in BLOCK_COMMANDS
        for argv in [c.argv]
        for k, arg in enumerate(argv[:-1])
        if arg in OUTPUT_OPTIONS and re.fullmatch(r"[\w.-][\w./-]*", argv[k + 1])
    }
    assert {"runs", "sweeps", "tiny-llava"} <= written
    found = subprocess.run(
        ["git", "check-ignore", "--no-index", *sorted(f"{w}/x" for w in written)],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    ignored = {line.split("/")[0] for line in found.stdout.splitlines()}
    assert ignored == written, sorted(written - ignored)
