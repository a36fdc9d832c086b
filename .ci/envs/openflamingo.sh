#!/usr/bin/env bash
# The fix-up of the OpenFlamingo reference environment after its lock is installed ($1: the
# environment). open_clip's image transforms need torchvision, whose PyPI build (for CUDA) does
# not fully load beside torch's +cpu build: the same two-line guard as vllm.sh (read there why).
set -euo pipefail
py="$1/bin/python"
meta="$("$py" -c 'import importlib.util as u; print(u.find_spec("torchvision").submodule_search_locations[0])')/_meta_registrations.py"
sed -i -E 's/^@torch\.library\.register_fake\("torchvision::(nms|qnms)"\)$/@(torch.library.register_fake("torchvision::\1") if torchvision.extension._has_ops() else (lambda fn: fn))/' "$meta"
[ "$(grep -c '_has_ops() else (lambda fn: fn)' "$meta")" = 2 ] || {
  echo "openflamingo.sh: torchvision's $meta no longer has the two unguarded registrations" >&2
  exit 1
}
# the check: upstream's factory and open_clip's transforms import
"$py" -c "import open_flamingo, open_clip, torchvision.transforms.v2.functional"
