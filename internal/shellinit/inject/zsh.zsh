# tmcp started this zsh with ZDOTDIR naming this directory. Each start-up
# file here reads the person's own of the same name with their ZDOTDIR
# back, then points ZDOTDIR here again for zsh to find the next; the last
# to run puts theirs back for good. __tmcp_zd is this directory,
# __tmcp_uzd the person's ZDOTDIR (__tmcp_uzs: whether they have one).
if (( ! ${+__tmcp_uzs} )); then
  typeset -g __tmcp_zd=$ZDOTDIR __tmcp_uzd=${TMCP_SAVED_ZDOTDIR-} __tmcp_uzs=${+TMCP_SAVED_ZDOTDIR}
  # The nonce stays for the integration, whoever loads it first, but goes
  # to no program the person's files run.
  (( ${+TMCP_NONCE} )) && typeset +x TMCP_NONCE
fi
__tmcp_zd=$ZDOTDIR
if (( __tmcp_uzs )); then ZDOTDIR=$__tmcp_uzd; else unset ZDOTDIR; fi
[[ -r ${ZDOTDIR:-$HOME}/@FILE@ ]] && source ${ZDOTDIR:-$HOME}/@FILE@
if (( ${+ZDOTDIR} )); then __tmcp_uzs=1 __tmcp_uzd=$ZDOTDIR; else __tmcp_uzs=0; fi
@AFTER@
if [[ @LAST@ ]]; then
  # The last file: the person's ZDOTDIR for good, and a history file
  # that a system file named after tmcp's directory goes to theirs.
  [[ $HISTFILE == $__tmcp_zd/* ]] && HISTFILE=${ZDOTDIR:-$HOME}/${HISTFILE#$__tmcp_zd/}
  unset __tmcp_zd __tmcp_uzd __tmcp_uzs TMCP_SAVED_ZDOTDIR
else
  ZDOTDIR=$__tmcp_zd
fi
