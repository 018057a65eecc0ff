#!/usr/bin/env bash
# ctest `completion_bash` / `completion_zsh`: the generated completion scripts (build/completions,
# from `vmm-run completion bash|zsh`) load in their shell and complete what the CLI defines.
#   tests/completion_test.sh bash|zsh SCRIPT
# zsh: a syntax check, and the #compdef/compdef lines; exit 77 (skipped) when zsh is not installed.
set -uo pipefail
shell=$1 script=$2
fail=0
expect() {  # expect WANTED WORDS...: completing WORDS (the last one partial) offers WANTED
  local wanted=$1
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _vmm_run
  local got=" ${COMPREPLY[*]} "
  for word in $wanted; do
    if [[ "$got" != *" $word "* ]]; then
      echo "completing '$*': expected '$word' in '${COMPREPLY[*]}'"
      fail=1
    fi
  done
}

if [ "$shell" = zsh ]; then
  command -v zsh >/dev/null || { echo "zsh is not installed: skipped"; exit 77; }
  zsh -n "$script" || exit 1
  head -1 "$script" | grep -qx '#compdef vmm-run' || { echo "no #compdef line"; exit 1; }
  grep -q "compdef _vmm_run vmm-run" "$script" || { echo "no compdef call"; exit 1; }
  zsh -fc "autoload -Uz compinit && compinit -u -D && source '$script' && [[ \${_comps[vmm-run]} == _vmm_run ]]" ||
    { echo "sourcing the script did not register _vmm_run for vmm-run"; exit 1; }
  echo "ok: $script"
  exit 0
fi

source "$script" || exit 1
complete -p vmm-run | grep -q -- "-F _vmm_run" || { echo "complete -p vmm-run: not registered"; exit 1; }
expect "run validate steps diff completion" vmm-run ""
expect "validate" vmm-run va
expect "--help --version" vmm-run --
expect "--backend" vmm-run run --back
expect "auto host cuda" vmm-run run x.yaml --backend ""
expect "host" vmm-run run x.yaml --backend h
expect "--report-dir --junit --quiet" vmm-run run x.yaml --
expect "--backend" vmm-run x.yaml --b             # vmm-run FILE... is vmm-run run FILE...
expect "--valijson --quiet" vmm-run validate --
expect "--markdown --fail-on --config --ignore-device --explain" vmm-run diff a b --
expect "bash zsh" vmm-run completion ""
expect "--schema" vmm-run steps --s
# A value with no choices completes file names (an empty reply; complete -o default).
COMP_WORDS=(vmm-run run --report-dir "")
COMP_CWORD=3
COMPREPLY=()
_vmm_run
[ ${#COMPREPLY[@]} -eq 0 ] || { echo "--report-dir offered '${COMPREPLY[*]}'"; fail=1; }
[ $fail -eq 0 ] && echo "ok: $script"
exit $fail
