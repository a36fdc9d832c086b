#!/usr/bin/env bash
# The fix-up of the OpenFlamingo reference environment after its lock is installed ($1: the
# environment). open_clip's image transforms need torchvision, whose PyPI build (for CUDA) does
# not fully load beside torch's +cpu build: the guard of .ci/lib.sh lets it load.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
py="$1/bin/python"
bla_guard_torchvision_ops "$py" openflamingo.sh
# the check: upstream's factory and open_clip's transforms import
"$py" -c "import open_flamingo, open_clip, torchvision.transforms.v2.functional"
