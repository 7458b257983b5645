# tmcp shell integration for bash (>= 4.4): semantic prompt marks (OSC 133
# A, B, C, D;status) and the working directory (OSC 7). Load it from
# ~/.bashrc with: eval "$(tmcp init bash)". Loading it twice does nothing.
if [ -z "${__tmcp_init-}" ] && [ -n "${BASH_VERSION-}" ]; then
__tmcp_init=1
__tmcp_ran= __tmcp_t0=0
# The pane's option names the shell that marks its prompts, so that tmcp's
# first run_command there types the command alone (in the background: a
# stopped tmux must not hold the shell up).
[ -n "${TMUX_PANE-}" ] && (command tmux set -p -t "$TMUX_PANE" @tmcp_marks "$$ bash" >/dev/null 2>&1 &)
__tmcp_osc7() {
  local LC_ALL=C p=$PWD u= c i
  for (( i = 0; i < ${#p}; i++ )); do
    c=${p:i:1}
    case $c in
      [-/._~A-Za-z0-9]) u+=$c ;;
      *) printf -v c '%%%02X' "'$c"; u+=${c: -3} ;;
    esac
  done
  printf '\e]7;file://%s%s\a' "${HOSTNAME-}" "$u"
}
# Runs first in PROMPT_COMMAND, so $? is the command's; it returns it
# unchanged for what runs after. D only after a command ran (not an
# empty line).
# D carries the command's run time in milliseconds as the shell measured
# it (tmcp_ms=, bash 5), which no reader's clock can spoil.
__tmcp_precmd() {
  local s=$? t=${EPOCHREALTIME-} took=
  if [ -n "$__tmcp_ran" ]; then
    __tmcp_ran=
    if [ -n "$t" ] && (( __tmcp_t0 > 0 )); then
      took=";tmcp_ms=$(( (10#${t/[.,]/} - __tmcp_t0) / 1000 ))"
    fi
    printf '\e]133;D;%s%s\a' "$s" "$took"
  fi
  __tmcp_osc7
  printf '\e]133;A\a'
  case $PS1 in *'133;B'*) ;; *) PS1+='\[\e]133;B\a\]' ;; esac
  return "$s"
}
if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
  PROMPT_COMMAND=(__tmcp_precmd "${PROMPT_COMMAND[@]}")
else
  PROMPT_COMMAND="__tmcp_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}"
fi
# PS0 is shown once a command line is read, before it runs: C, and a note
# (made by the arithmetic, which prints nothing) that a command ran, and
# when (in microseconds, where bash 5 tells).
if [ -n "${EPOCHREALTIME-}" ]; then
  PS0="${PS0-}"'${__tmcp_ran:0:$((__tmcp_ran=1,__tmcp_t0=10#${EPOCHREALTIME/[.,]/},0))}\e]133;C\a'
else
  PS0="${PS0-}"'${__tmcp_ran:0:$((__tmcp_ran=1,0))}\e]133;C\a'
fi
fi
