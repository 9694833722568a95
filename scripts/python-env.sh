# Sourced by the scripts that need Python tools from PyPI (scripts/test.sh, Fuzz/openapi.sh):
# `python_env VENV PACKAGE…` makes the virtual environment VENV with those packages unless it has them already
# (the caller checks), never touching the system Python. The packages are installed by uv (itself from PyPI, into
# the environment first): it installs these in seconds where pip took a minute and a half.
python_env() {
  local venv=$1
  shift
  python3 -m venv "$venv"
  if "$venv/bin/pip" install --quiet --disable-pip-version-check 'uv>=0.4,<1' \
      && "$venv/bin/uv" pip install --quiet --python "$venv/bin/python3" "$@"; then
    return 0
  fi
  echo "python-env: uv failed; installing with pip" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
}
