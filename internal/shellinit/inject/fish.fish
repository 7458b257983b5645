# tmcp put this file's directory first in XDG_DATA_DIRS for fish to read
# it: the entry goes back out, and tmcp's integration loads at the first
# prompt, once the person's own configuration has run (it wraps their
# prompt).
set -l __tmcp_entry (string replace -r '/fish/vendor_conf\.d$' '' -- (status dirname))
set -l __tmcp_dirs (string split : -- "$XDG_DATA_DIRS")
if set -l i (contains -i -- $__tmcp_entry $__tmcp_dirs)
    set -e __tmcp_dirs[$i]
end
if set -q TMCP_XDG_DATA_DIRS_UNSET
    set -e TMCP_XDG_DATA_DIRS_UNSET
    set -e XDG_DATA_DIRS
else
    set -gx XDG_DATA_DIRS (string join : -- $__tmcp_dirs)
end
# The nonce stays for the integration, whoever loads it first, but goes to
# no program the person's configuration runs.
set -q TMCP_NONCE; and set -gu TMCP_NONCE $TMCP_NONCE
set -g __tmcp_script $__tmcp_entry/init.fish
function __tmcp_load --on-event fish_prompt
    functions -e __tmcp_load
    source $__tmcp_script
    set -e __tmcp_script
    # This prompt's event came before the integration's handler was there.
    __tmcp_prompt
end
