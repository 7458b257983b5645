# tmcp shell integration for fish: semantic prompt marks (OSC 133 A, B, C,
# D;status) and the working directory (OSC 7). Load it from
# ~/.config/fish/config.fish with: tmcp init fish | source
# Loading it twice does nothing.
if not set -q __tmcp_init
    set -g __tmcp_init 1
    # Each mark carries the shell's nonce (tmcp_n=), a secret tmcp learns
    # from the pane's option or gave in TMCP_NONCE: a program that prints
    # marks cannot pass for the shell. The variable is not passed on to
    # programs.
    set -g __tmcp_n "$TMCP_NONCE"
    set -e TMCP_NONCE
    test -n "$__tmcp_n"; or set __tmcp_n (od -An -N12 -tx1 /dev/urandom 2>/dev/null | string join '')
    set __tmcp_n (string replace -ra '[^0-9A-Za-z]' '' -- "$__tmcp_n")
    test -n "$__tmcp_n"; or set __tmcp_n (random)(random)(random)(random)
    # The pane's option names the shell that marks its prompts, and its
    # nonce, so that tmcp believes its marks and its first run_command
    # there types the command alone (in the background: a stopped tmux
    # must not hold the shell up).
    if set -q TMUX_PANE
        command tmux set -p -t $TMUX_PANE @tmcp_marks "$fish_pid fish $__tmcp_n" >/dev/null 2>&1 &
        disown 2>/dev/null
    end
    # The working directory: OSC 7 for the terminal, and with the
    # prompt's A for tmcp.
    function __tmcp_prompt --on-event fish_prompt
        set -l url file://$hostname(string escape --style=url -- $PWD)
        printf '\e]7;%s\a' $url
        printf '\e]133;A;tmcp_cwd=%s;tmcp_n=%s\a' $url $__tmcp_n
    end
    function __tmcp_preexec --on-event fish_preexec
        printf '\e]133;C;tmcp_n=%s\a' $__tmcp_n
    end
    function __tmcp_postexec --on-event fish_postexec
        # With the run time in milliseconds as fish measured it.
        printf '\e]133;D;%s;tmcp_ms=%s;tmcp_n=%s\a' $status $CMD_DURATION $__tmcp_n
    end
    # B ends the prompt: the prompt defined now is wrapped to print it.
    if functions -q fish_prompt; and not functions -q __tmcp_fish_prompt
        functions -c fish_prompt __tmcp_fish_prompt
        function fish_prompt
            __tmcp_fish_prompt
            printf '\e]133;B;tmcp_n=%s\a' $__tmcp_n
        end
    end
end
