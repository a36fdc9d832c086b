# $1: the environment's folder. The project's commands (pyproject.toml's [project.scripts]) as
# launchers of the code on PYTHONPATH: the tier's tests run the clone's code, which is not installed
# here (the environment is shared by every clone), and start `bla-eval` beside the environment's
# python as they do in .venv. (newest.sh is this file.)
set -euo pipefail
"$1/bin/python" - "$1/bin" pyproject.toml <<'PY'
import re
import sys
from pathlib import Path

bin_folder, pyproject = Path(sys.argv[1]), Path(sys.argv[2]).read_text(encoding="utf-8")
table = re.search(r"^\[project\.scripts\]\n(.*?)(?:^\[|\Z)", pyproject, re.M | re.S).group(1)
for name, module, function in re.findall(r'^([\w-]+) = "([\w.]+):(\w+)"', table, re.M):
    script = bin_folder / name
    script.write_text(
        f"#!{bin_folder / 'python'}\nimport sys\nfrom {module} import {function}\n"
        f"sys.exit({function}())\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
PY
"$1/bin/bla-eval" --help >/dev/null 2>&1 || true
test -x "$1/bin/bla-eval"
