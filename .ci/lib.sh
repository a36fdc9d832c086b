# Shared by .ci/setup, .ci/build-env, .ci/lock and the fix-ups .ci/envs/*.sh (sourced, not run): uv,
# pinned by the locks, the one way an environment is installed from a lock, and the one patch that
# lets PyPI's torchvision load beside torch's +cpu build.
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

bla_guard_torchvision_ops() {  # bla_guard_torchvision_ops PYTHON WHO: load PyPI's torchvision beside torch +cpu
  # PyPI has no CPU build of torchvision: its CUDA build stays, its C++ ops (linked to CUDA torch)
  # do not load, which torchvision allows (`extension._has_ops()` is False and every op then
  # refuses to run), except that `_meta_registrations.py` registers fake kernels for
  # `torchvision::nms` and `::qnms` unconditionally and so fails with "operator torchvision::nms
  # does not exist". The one patch: those two registrations get the same `_has_ops()` guard the
  # module's other registrations have. WHO names the caller in the error.
  local meta
  meta="$("$1" -c 'import importlib.util as u; print(u.find_spec("torchvision").submodule_search_locations[0])')/_meta_registrations.py"
  sed -i -E 's/^@torch\.library\.register_fake\("torchvision::(nms|qnms)"\)$/@(torch.library.register_fake("torchvision::\1") if torchvision.extension._has_ops() else (lambda fn: fn))/' "$meta"
  [ "$(grep -c '_has_ops() else (lambda fn: fn)' "$meta")" = 2 ] || {
    echo "$2: torchvision's $meta no longer has the two unguarded registrations" >&2
    return 1
  }
}
