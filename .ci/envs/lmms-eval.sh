# $1: the environment's folder. The check that lmms-eval's LLaVA model class imports (without
# torchvision, which lmms-eval.txt leaves out).
set -euo pipefail
"$1/bin/python" -c "import lmms_eval.models.chat.llava_hf, lmms_eval.evaluator"
