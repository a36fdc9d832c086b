"""The process's known secrets masked in any case and encoding, credential-shaped text and
terminal control sequences removed from what is shown, at the places output leaves the process:
the writers of ``bla_eval.outputs`` and the streams of ``cli_common.run_guarded``."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from bla_eval import redact
from bla_eval.cli_common import run_guarded, say
from bla_eval.outputs import write_json_atomic, write_lines_atomic

SECRET = "sk-Redact/Test#Secret-42"


@pytest.fixture(autouse=True)
def registered() -> None:
    redact.register(SECRET)


@pytest.mark.parametrize(
    "form",
    [
        SECRET,
        SECRET.upper(),
        SECRET.lower(),
        quote(SECRET, safe=""),
        quote(SECRET, safe="").lower(),
        base64.b64encode(SECRET.encode()).decode(),
    ],
)
def test_a_known_secret_is_masked_in_any_case_and_encoding(form: str):
    assert redact.scrub(f"got <{form}>") == "got <***>"


@pytest.mark.parametrize(
    ("url", "secrets"),
    [
        ("https://user:pa/ss#word@host/v1", ["user:pa/ss#word", "pa/ss#word"]),
        ("http://host/v1?api_key=abcd1234&route=a", ["abcd1234"]),
        ("http://host/v1?ACCESS_TOKEN=abcd1234", ["abcd1234"]),
        ("http://host/v1?route=abcd1234", []),
    ],
)
def test_the_secrets_of_a_url(url: str, secrets: list[str]):
    found = redact.url_secrets(url)
    assert all(s in found for s in secrets) and bool(found) == bool(secrets)


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Authorization: Bearer sk-unknown-xyz", "sk-unknown-xyz"),
        ("see https://u:p/w#x@example.org/v1 now", "p/w#x"),
        ("404 for /v1/chat?key=qqqq1111&x=1", "qqqq1111"),
        ("red \x1b[31mtext\x1b[0m \x1b]0;title\x07 \x07bell", "\x1b"),
    ],
)
def test_shown_text_loses_credential_shapes_and_control_sequences(text: str, gone: str):
    assert gone not in redact.shown(text)


def test_the_writers_mask_known_secrets(tmp_path: Path):
    write_json_atomic(tmp_path / "a.json", {"model": SECRET.upper(), SECRET: [SECRET]})
    write_lines_atomic(tmp_path / "b.jsonl", [{"answers": [f'"{SECRET}"']}])
    for name in ("a.json", "b.jsonl"):
        text = (tmp_path / name).read_text()
        assert SECRET.lower() not in text.lower() and "***" in text
    assert json.loads((tmp_path / "a.json").read_text())["model"] == "***"


def test_what_a_command_prints_is_scrubbed(capsys):
    def command() -> int:
        print(f"table | {SECRET} \x1b[2J|")
        sys.stderr.write(f"progress {quote(SECRET, safe='')}\n")
        raise ValueError(f"bad \x1b]8;;http://x\x07 value {SECRET.lower()}")

    assert run_guarded(command, debug=False, prog="bla-eval") == 2
    out, err = capsys.readouterr()
    assert out == "table | *** |\n"
    assert err == "progress ***\nbla-eval: error: bad value ***\n"
    assert sys.stdout is not None and not isinstance(sys.stdout, redact.ScrubbedStream)
    say(f"\x1b[1m{SECRET}")
    assert capsys.readouterr().err == "***\n"


KEY = "sk-proj-Pieces0fTheKey-AbCdEfGhIjKlMnOpQrStUvWxYz-0123456789"


@pytest.mark.parametrize(
    "echoed",
    [
        KEY[:30] + "\n" + KEY[30:],  # split by a newline
        KEY[:30] + "\u200b" + KEY[30:],  # by a zero-width space
        KEY[:30] + f"\\u{ord(KEY[30]):04x}" + KEY[31:],  # one character \u-escaped
        KEY[:30] + f"%{ord(KEY[30]):02X}" + KEY[31:],  # one character percent-encoded
        KEY[:-2],  # the key minus two characters
        KEY[7 : 7 + redact.PIECE_CHARS],  # any 16-character piece
    ],
)
def test_any_piece_of_a_secret_is_masked_after_normalising(echoed: str, tmp_path: Path, capsys):
    redact.register(KEY)
    assert redact.scrub(f"server said <{echoed}>") == "server said <***>"
    write_json_atomic(tmp_path / "results.json", {"model": echoed, "note": [f"x {echoed} y"]})
    written = json.loads((tmp_path / "results.json").read_text())
    assert written == {"model": "***", "note": ["x *** y"]}

    def command() -> int:
        print(f"model {echoed} done")
        return 0

    assert run_guarded(command, debug=False, prog="bla-eval") == 0
    assert capsys.readouterr().out == "model *** done\n"


def test_a_staged_output_loses_secret_pieces_whoever_wrote_its_files(tmp_path: Path):
    from bla_eval.outputs import staged

    redact.register(KEY)
    with staged(tmp_path / "report", "bla-eval analyze") as stage:
        (stage / "report.md").write_text(f"| {KEY[:-2]} | 0.5 |\n", encoding="utf-8")
    assert (tmp_path / "report" / "report.md").read_text() == "| *** | 0.5 |\n"


def test_a_key_in_pieces_of_twelve_across_records_and_fields_leaves_no_piece_of_eight(
    tmp_path: Path,
):
    redact.register(KEY)
    chunks = [KEY[i : i + 12] for i in range(0, len(KEY), 12)]
    records = [
        {"task": "t", "id": str(n), "scores": [0.5], "answers": [f"Yes {chunk}"], chunk: n}
        for n, chunk in enumerate(chunks)
    ]
    write_lines_atomic(tmp_path / "scores.jsonl", records)
    usage = {"server_models": {chunk: 1 for chunk in chunks}, "fingerprints": chunks}
    write_json_atomic(tmp_path / "results.json", {"usage": usage})
    pieces = {KEY[i : i + 8].lower() for i in range(len(KEY) - 7)}
    for name in ("scores.jsonl", "results.json"):
        text = (tmp_path / name).read_text().lower()
        assert not [p for p in pieces if p in text], name
    assert redact.scrub(f"<{KEY[:7]}>") == f"<{KEY[:7]}>"  # shorter than a piece: kept
