# tmcp shell integration for zsh: semantic prompt marks (OSC 133 A, B, C,
# D;status) and the working directory (OSC 7). Load it from ~/.zshrc with:
# eval "$(tmcp init zsh)". Loading it twice does nothing.
if [[ -z ${__tmcp_init-} ]]; then
typeset -g __tmcp_init=1 __tmcp_ran= __tmcp_t0=
zmodload zsh/datetime 2>/dev/null # EPOCHREALTIME
# The pane's option names the shell that marks its prompts, so that tmcp's
# first run_command there types the command alone (in the background: a
# stopped tmux must not hold the shell up).
[[ -n ${TMUX_PANE-} ]] && (command tmux set -p -t "$TMUX_PANE" @tmcp_marks "$$ zsh" >/dev/null 2>&1 &)
__tmcp_osc7() {
  emulate -L zsh
  local LC_ALL=C u= c i
  for (( i = 1; i <= ${#PWD}; i++ )); do
    c=${PWD[i]}
    case $c in
      ([-/._~A-Za-z0-9]) u+=$c ;;
      (*) printf -v c '%%%02X' "'$c"; u+=${c[-3,-1]} ;;
    esac
  done
  printf '\e]7;file://%s%s\a' "${HOST-}" "$u"
}
# First of the precmd hooks, so $? is the command's. D only after a
# command ran (not an empty line).
# D carries the command's run time in milliseconds as the shell measured
# it (tmcp_ms=, with zsh/datetime), which no reader's clock can spoil.
__tmcp_precmd() {
  local s=$? t=${EPOCHREALTIME-} took=
  if [[ -n $__tmcp_ran ]]; then
    __tmcp_ran=
    if [[ -n $t && -n $__tmcp_t0 ]]; then
      local -i ms=$(( (t - __tmcp_t0) * 1000 ))
      took=";tmcp_ms=$ms"
    fi
    printf '\e]133;D;%s%s\a' "$s" "$took"
  fi
  __tmcp_osc7
  printf '\e]133;A\a'
  [[ $PS1 == *'133;B'* ]] || PS1+=$'%{\e]133;B\a%}'
  return $s
}
__tmcp_preexec() {
  __tmcp_ran=1 __tmcp_t0=${EPOCHREALTIME-}
  printf '\e]133;C\a'
}
# The line run_command types once to hand its helper to the shell stays
# out of the history (zsh cannot drop it once it is in); it may begin with
# nocorrect.
__tmcp_history() {
  [[ $1 != ' '(|'nocorrect ')'trap '\''stty echo'\'' INT;stty -echo;printf '\''\033]133;R;tmcp-'* ]]
}
typeset -ga precmd_functions zshaddhistory_functions
zshaddhistory_functions+=(__tmcp_history)
precmd_functions=(__tmcp_precmd $precmd_functions)
autoload -Uz add-zsh-hook && add-zsh-hook preexec __tmcp_preexec
fi
