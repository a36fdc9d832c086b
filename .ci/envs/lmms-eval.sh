# $1: the environment's folder. PyPI's torchvision does not load beside the CPU torch of
# lmms-eval.txt ("operator torchvision::nms does not exist"), and nothing BLA runs needs it.
set -euo pipefail
"$1/bin/pip" uninstall -y -q torchvision
"$1/bin/python" -c "import lmms_eval.models.chat.llava_hf"
