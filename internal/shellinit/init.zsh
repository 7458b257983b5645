# tmcp shell integration for zsh: semantic prompt marks (OSC 133 A, B, C,
# D;status) and the working directory (OSC 7). Load it from ~/.zshrc with:
# eval "$(tmcp init zsh)". Loading it twice does nothing.
if [[ -z ${__tmcp_init-} ]]; then
typeset -g __tmcp_init=1 __tmcp_ran= __tmcp_t0=
zmodload zsh/datetime 2>/dev/null # EPOCHREALTIME
# Each mark carries the shell's nonce (tmcp_n=), a secret tmcp learns from
# the pane's option or gave in TMCP_NONCE: a program that prints marks
# cannot pass for the shell. The variable is not passed on to programs.
typeset -g __tmcp_n=${TMCP_NONCE-}
unset TMCP_NONCE
[[ -n $__tmcp_n ]] || __tmcp_n=$(LC_ALL=C od -An -N12 -tx1 /dev/urandom 2>/dev/null)
__tmcp_n=${__tmcp_n//[^0-9A-Za-z]/}
[[ -n $__tmcp_n ]] || printf -v __tmcp_n '%04x' $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM $RANDOM
typeset -g __tmcp_pn=$__tmcp_n # the nonce in PS1
# The pane's option names the shell that marks its prompts, and its nonce,
# so that tmcp believes its marks and its first run_command there types
# the command alone (in the background: a stopped tmux must not hold the
# shell up).
[[ -n ${TMUX_PANE-} ]] && (command tmux set -p -t "$TMUX_PANE" @tmcp_marks "$$ zsh $__tmcp_n" >/dev/null 2>&1 &)
# The working directory, as a URL: OSC 7 for the terminal, and with the
# prompt's A for tmcp.
__tmcp_cwd() {
  emulate -L zsh
  local LC_ALL=C u= c i
  for (( i = 1; i <= ${#PWD}; i++ )); do
    c=${PWD[i]}
    case $c in
      ([-/._~A-Za-z0-9]) u+=$c ;;
      (*) printf -v c '%%%02X' "'$c"; u+=${c[-3,-1]} ;;
    esac
  done
  typeset -g __tmcp_url=file://${HOST-}$u
  printf '\e]7;%s\a' "$__tmcp_url"
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
    printf '\e]133;D;%s%s;tmcp_n=%s\a' "$s" "$took" "$__tmcp_n"
  fi
  __tmcp_cwd
  printf '\e]133;A;tmcp_cwd=%s;tmcp_n=%s\a' "$__tmcp_url" "$__tmcp_n"
  # tmcp's helper sets another nonce in a shell tmcp reaches through ssh,
  # whose pane option it cannot read: the prompt follows.
  if [[ $__tmcp_pn != $__tmcp_n ]]; then
    PS1=${PS1//"133;B;tmcp_n=$__tmcp_pn"/"133;B;tmcp_n=$__tmcp_n"}
    __tmcp_pn=$__tmcp_n
  fi
  [[ $PS1 == *'133;B'* ]] || PS1+=$'%{\e]133;B;tmcp_n='$__tmcp_n$'\a%}'
  return $s
}
__tmcp_preexec() {
  __tmcp_ran=1 __tmcp_t0=${EPOCHREALTIME-}
  printf '\e]133;C;tmcp_n=%s\a' "$__tmcp_n"
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
