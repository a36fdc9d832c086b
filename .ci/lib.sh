# Shared by .ci/setup, .ci/build-env and .ci/lock (sourced, not run): uv, pinned by the locks,
# and the one way an environment is installed from a lock.
#
# uv comes from .ci/locks/uv.txt (its release and hashes, taken from dev.txt by .ci/lock), installed
# once with pip into ${BLA_ENV_CACHE:-~/.cache/bla-envs}/uv-<hash of uv.txt>.
# Folders of wheels that lie on this machine (BLA_FIND_LINKS, space-separated; by default the
# ones this machine kind has) are offered to uv beside PyPI: every file is checked against the
# lock's hashes wherever it comes from, so they only save downloads. The PyTorch builds marked
# +cpu (the vLLM and lmms-eval environments) are found only there, or on PyTorch's CPU index
# (BLA_FIND_LINKS=https://download.pytorch.org/whl/cpu/torch/ elsewhere).

bla_env_root="${BLA_ENV_CACHE:-$HOME/.cache/bla-envs}"

bla_uv() {  # prints the path of the pinned uv (or of $BLA_UV), installing it first when missing
  local key dest
  if [ -n "${BLA_UV:-}" ]; then echo "$BLA_UV"; return 0; fi
  key="$(sha256sum .ci/locks/uv.txt | cut -c1-16)"
  dest="$bla_env_root/uv-$key"
  if [ ! -x "$dest/bin/uv" ] || [ ! -f "$dest/.complete" ]; then
    mkdir -p "$bla_env_root"
    rm -rf "$dest"
    python3 -m venv "$dest" >&2
    # (pip's warnings about this machine's configured index folders are dropped, nothing else)
    "$dest/bin/pip" install -q --no-deps --require-hashes -r .ci/locks/uv.txt \
      2> >(grep -v "^WARNING: Location 'file:" >&2)
    touch "$dest/.complete"
  fi
  echo "$dest/bin/uv"
}

bla_find_links() {  # prints uv's --find-links options for the wheel folders of this machine
  local folder
  for folder in ${BLA_FIND_LINKS-/opt/wheels /opt/pypi-more/files}; do
    if [[ "$folder" == http* ]] || [ -d "$folder" ]; then printf -- '--find-links\n%s\n' "$folder"; fi
  done
}

# llama.cpp without its multimodal library (mtmd, LLAVA_BUILD): the tests' llama.cpp server serves a
# text model, and llama-cpp-python loads mtmd only for its multimodal chat formats.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF;-DGGML_AVX=ON;-DGGML_AVX2=ON;-DGGML_FMA=ON;-DGGML_F16C=ON;-DGGML_BMI2=ON;-DLLAVA_BUILD=OFF"

bla_sync() {  # bla_sync PYTHON LOCK: the environment of PYTHON holds exactly LOCK's packages
  local uv links=() prefix
  uv="$(bla_uv)"
  mapfile -t links < <(bla_find_links)
  prefix="$("$1" -c 'import sys; print(sys.prefix)')"
  rm -f "$prefix/.bla-lock.json"
  # llama-cpp-python builds from source: for any x86-64 CPU with AVX2, not for this machine's own
  # instruction sets (a native build's AMX kernels crash with a general protection fault on
  # virtual machines that advertise AMX); uv keys its cached build by these settings.
  "$uv" pip sync --quiet --python "$1" --require-hashes "${links[@]}" \
    --config-settings-package "llama-cpp-python:cmake.args=$LLAMA_CMAKE_ARGS" "$2"
  # The lock it now holds, for results.json's provenance (bla_eval/provenance.py reads it).
  printf '{"lock": "%s", "sha256": "%s"}\n' "$2" "$(sha256sum "$2" | cut -d' ' -f1)" \
    >"$prefix/.bla-lock.json"
}
