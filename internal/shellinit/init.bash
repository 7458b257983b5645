# tmcp shell integration for bash (>= 4.4): semantic prompt marks (OSC 133
# A, B, C, D;status) and the working directory (OSC 7). Load it from
# ~/.bashrc with: eval "$(tmcp init bash)". Loading it twice does nothing.
if [ -z "${__tmcp_init-}" ] && [ -n "${BASH_VERSION-}" ]; then
__tmcp_init=1
__tmcp_ran= __tmcp_t0=0
# Each mark carries the shell's nonce (tmcp_n=), a secret tmcp learns from
# the pane's option or gave in TMCP_NONCE: a program that prints marks
# cannot pass for the shell. The variable is not passed on to programs.
__tmcp_n=${TMCP_NONCE-}
unset TMCP_NONCE
if [ -z "$__tmcp_n" ] && [ -n "${SRANDOM-}" ]; then
  printf -v __tmcp_n '%08x%08x%08x' "$SRANDOM" "$SRANDOM" "$SRANDOM"
elif [ -z "$__tmcp_n" ]; then
  __tmcp_n=$(LC_ALL=C od -An -N12 -tx1 /dev/urandom 2>/dev/null)
fi
__tmcp_n=${__tmcp_n//[!0-9A-Za-z]/}
[ -n "$__tmcp_n" ] || printf -v __tmcp_n '%04x' "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM" "$RANDOM"
__tmcp_pn=$__tmcp_n # the nonce in PS0 and PS1
# The pane's option names the shell that marks its prompts, and its nonce,
# so that tmcp believes its marks and its first run_command there types
# the command alone (in the background: a stopped tmux must not hold the
# shell up).
[ -n "${TMUX_PANE-}" ] && (command tmux set -p -t "$TMUX_PANE" @tmcp_marks "$$ bash $__tmcp_n" >/dev/null 2>&1 &)
# The working directory, as a URL: OSC 7 for the terminal, and with the
# prompt's A for tmcp.
__tmcp_cwd() {
  local LC_ALL=C p=$PWD u= c i
  for (( i = 0; i < ${#p}; i++ )); do
    c=${p:i:1}
    case $c in
      [-/._~A-Za-z0-9]) u+=$c ;;
      *) printf -v c '%%%02X' "'$c"; u+=${c: -3} ;;
    esac
  done
  __tmcp_url=file://${HOSTNAME-}$u
  printf '\e]7;%s\a' "$__tmcp_url"
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
    printf '\e]133;D;%s%s;tmcp_n=%s\a' "$s" "$took" "$__tmcp_n"
  fi
  __tmcp_cwd
  printf '\e]133;A;tmcp_cwd=%s;tmcp_n=%s\a' "$__tmcp_url" "$__tmcp_n"
  # tmcp's helper sets another nonce in a shell tmcp reaches through ssh,
  # whose pane option it cannot read: the prompts follow.
  if [ "$__tmcp_pn" != "$__tmcp_n" ]; then
    PS0=${PS0//"133;C;tmcp_n=$__tmcp_pn"/"133;C;tmcp_n=$__tmcp_n"}
    PS1=${PS1//"133;B;tmcp_n=$__tmcp_pn"/"133;B;tmcp_n=$__tmcp_n"}
    __tmcp_pn=$__tmcp_n
  fi
  case $PS1 in *'133;B'*) ;; *) PS1+='\[\e]133;B;tmcp_n='$__tmcp_n'\a\]' ;; esac
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
  PS0="${PS0-}"'${__tmcp_ran:0:$((__tmcp_ran=1,__tmcp_t0=10#${EPOCHREALTIME/[.,]/},0))}\e]133;C;tmcp_n='$__tmcp_n'\a'
else
  PS0="${PS0-}"'${__tmcp_ran:0:$((__tmcp_ran=1,0))}\e]133;C;tmcp_n='$__tmcp_n'\a'
fi
fi
