# tmcp started this bash in POSIX mode (POSIXLY_CORRECT) with ENV naming
# this file, the one start-up file such a bash reads. POSIX mode goes, ENV
# is put back, the person's own files are read as bash itself would read
# them, then tmcp's integration.
unset POSIXLY_CORRECT # leaves POSIX mode
set +o posix
builtin shopt -u inherit_errexit # set by POSIX mode, not cleared by leaving it
[ "${MAILCHECK-}" = 600 ] && MAILCHECK=60 # POSIX mode's default, not bash's
if [ -n "${TMCP_SAVED_ENV+set}" ]; then export ENV="$TMCP_SAVED_ENV"; else unset ENV; fi
unset TMCP_SAVED_ENV
# The nonce stays for the integration, whoever loads it first, but goes to
# no program the person's files run.
[ -n "${TMCP_NONCE+set}" ] && export -n TMCP_NONCE
if builtin shopt -q login_shell; then
  [ -r /etc/profile ] && . /etc/profile
  if [ -r ~/.bash_profile ]; then . ~/.bash_profile
  elif [ -r ~/.bash_login ]; then . ~/.bash_login
  elif [ -r ~/.profile ]; then . ~/.profile
  fi
else
  [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc
  [ -r ~/.bashrc ] && . ~/.bashrc
fi
. "${BASH_SOURCE[0]%/*}/init.bash"
