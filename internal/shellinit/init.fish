# tmcp shell integration for fish: semantic prompt marks (OSC 133 A, B, C,
# D;status) and the working directory (OSC 7). Load it from
# ~/.config/fish/config.fish with: tmcp init fish | source
# Loading it twice does nothing.
if not set -q __tmcp_init
    set -g __tmcp_init 1
    # The pane's option names the shell that marks its prompts, so that
    # tmcp's first run_command there types the command alone (in the
    # background: a stopped tmux must not hold the shell up).
    if set -q TMUX_PANE
        command tmux set -p -t $TMUX_PANE @tmcp_marks "$fish_pid fish" >/dev/null 2>&1 &
        disown 2>/dev/null
    end
    function __tmcp_prompt --on-event fish_prompt
        printf '\e]7;file://%s%s\a' $hostname (string escape --style=url -- $PWD)
        printf '\e]133;A\a'
    end
    function __tmcp_preexec --on-event fish_preexec
        printf '\e]133;C\a'
    end
    function __tmcp_postexec --on-event fish_postexec
        # With the run time in milliseconds as fish measured it.
        printf '\e]133;D;%s;tmcp_ms=%s\a' $status $CMD_DURATION
    end
    # B ends the prompt: the prompt defined now is wrapped to print it.
    if functions -q fish_prompt; and not functions -q __tmcp_fish_prompt
        functions -c fish_prompt __tmcp_fish_prompt
        function fish_prompt
            __tmcp_fish_prompt
            printf '\e]133;B\a'
        end
    end
end
