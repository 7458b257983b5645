package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Default patterns the recipes fill in when the caller gives none.
const (
	defaultStopPattern  = `(?i)error|fatal|panic|traceback|address already in use|not found`
	defaultFailPattern  = `error|fail(ed|ure)?|panic|exception|traceback|exit (status|code) [1-9]`
	defaultReadyTimeout = 60
)

// recipe is one prompt: how an agent does a common task with the tools.
type recipe struct {
	prompt *mcp.Prompt
	writes bool // types into panes or starts programs: withheld in the readonly tier
	render func(args map[string]string) string
}

// recipes returns every prompt tmcp has, whatever the tier.
func recipes() []recipe {
	return []recipe{
		{prompt: &mcp.Prompt{Name: "start_service", Title: "Start a service",
			Description: "Start a long-running command and wait until it prints that it is ready.",
			Arguments: []*mcp.PromptArgument{
				{Name: "command", Description: "shell command that starts it", Required: true},
				{Name: "readyPattern", Description: "RE2 pattern of the line that says it is ready", Required: true},
				{Name: "paneId", Description: "pane to start it in; omitted: pick or make one"},
				{Name: "stopPattern", Description: "RE2 pattern of a failure line"},
			}}, writes: true, render: renderStartService},
		{prompt: &mcp.Prompt{Name: "find_failing_pane", Title: "Find the failing pane",
			Description: "Find which panes show an error, and what failed there, without changing anything.",
			Arguments: []*mcp.PromptArgument{
				{Name: "pattern", Description: "RE2 pattern of a failure; omitted: common error words"},
				{Name: "sessionName", Description: "only this session's panes"},
			}}, render: renderFindFailingPane},
		{prompt: &mcp.Prompt{Name: "watch_job", Title: "Watch a long job",
			Description: "Run a long command, or follow a pane, and report its progress across turns.",
			Arguments: []*mcp.PromptArgument{
				{Name: "command", Description: "command to run; omitted: follow the pane"},
				{Name: "paneId", Description: "pane to run it in or to follow"},
			}}, writes: true, render: renderWatchJob},
		{prompt: &mcp.Prompt{Name: "recover_stuck_pane", Title: "Recover a stuck pane",
			Description: "Bring a hung pane back to its shell prompt, escalating one step at a time.",
			Arguments: []*mcp.PromptArgument{
				{Name: "paneId", Description: "the stuck pane", Required: true},
			}}, writes: true, render: renderRecoverStuckPane},
	}
}

// offeredRecipes returns the recipes the tier allows.
func (s *Server) offeredRecipes() []recipe {
	var out []recipe
	for _, r := range recipes() {
		if !r.writes || s.cfg.Tier >= Mutating {
			out = append(out, r)
		}
	}
	return out
}

// addPrompts registers the prompts the tier allows.
func (s *Server) addPrompts(m *mcp.Server) {
	for _, r := range s.offeredRecipes() {
		m.AddPrompt(r.prompt, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			text, err := r.text(req.Params.Arguments)
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Description: r.prompt.Description,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
	}
}

// text renders the recipe, once its required arguments are given and its
// unknown ones refused.
func (r recipe) text(args map[string]string) (string, error) {
	known := map[string]bool{}
	var missing []string
	for _, a := range r.prompt.Arguments {
		known[a.Name] = true
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("prompt %s needs %s", r.prompt.Name, strings.Join(missing, " and "))
	}
	for name := range args {
		if !known[name] {
			return "", fmt.Errorf("prompt %s has no argument %q; it takes %s", r.prompt.Name, name, argNames(r.prompt))
		}
	}
	return r.render(args), nil
}

func argNames(p *mcp.Prompt) string {
	names := make([]string, len(p.Arguments))
	for i, a := range p.Arguments {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// or returns v, or def when v is empty.
func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// q renders a value as a JSON string, as the model will pass it.
func q(v string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep && and > readable
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// paneArg renders `, "paneId": "%3"` for a given pane, or nothing.
func paneArg(id string) string {
	if id == "" {
		return ""
	}
	return `, "paneId": ` + q(id)
}

func renderStartService(a map[string]string) string {
	where := "Pick an idle shell pane (list_panes) or make one (create_window); call it P."
	if a["paneId"] != "" {
		where = fmt.Sprintf("Use pane %s; call it P.", a["paneId"])
	}
	return fmt.Sprintf(`Start the service %s and wait until it is ready.
1. %s
2. capture_since {"paneId": P} → a cursor from before the start.
3. send_keys {"paneId": P, "keys": %s} (or run_command with detach: true).
4. wait_for_text {"paneId": P, "cursor": <cursor>, "patterns": [%s], "stop": [%s], "regex": true, "timeoutSeconds": %d}.
5. matched: report P and the ready line. stopped or timeout: report the output tail and what failed; do not retry blindly.`,
		q(a["command"]), where, q(a["command"]), q(a["readyPattern"]), q(or(a["stopPattern"], defaultStopPattern)), defaultReadyTimeout)
}

func renderFindFailingPane(a map[string]string) string {
	session := ""
	if a["sessionName"] != "" {
		session = `, "sessionName": ` + q(a["sessionName"])
	}
	return fmt.Sprintf(`Find the panes that show a failure; change nothing.
1. search_panes {"pattern": %s, "regex": true, "matchCase": false%s}.
2. For each matching pane: snapshot_pane {"paneId": …} for its command, exit status and last lines.
3. Report each failing pane's id, command and the lines showing the error; if none matched, say so.`,
		q(or(a["pattern"], defaultFailPattern)), session)
}

func renderWatchJob(a map[string]string) string {
	if a["command"] == "" {
		return fmt.Sprintf(`Follow pane %s across turns, reading only new output.
1. capture_since {%s} → the screen and a cursor.
2. Each turn: capture_since {"cursor": <last cursor>} → only the new lines and the next cursor; summarise progress.
3. To block until something happens: wait_for_text {"cursor": <last cursor>, "idleSeconds": 10}.`,
			or(a["paneId"], "(the only pane)"), strings.TrimPrefix(paneArg(a["paneId"]), ", "))
	}
	return fmt.Sprintf(`Run %s as a job and report its progress across turns.
1. run_command {"command": %s%s, "detach": true} → jobId.
2. Each turn: get_job {"jobId": <jobId>, "timeoutSeconds": 30} → status and output tail; summarise progress.
3. When finished: report exitStatus and the last lines; on failure, the lines that explain it.`,
		q(a["command"]), q(a["command"]), paneArg(a["paneId"]))
}

func renderRecoverStuckPane(a map[string]string) string {
	return fmt.Sprintf(`Bring pane %[1]s back to its shell prompt. Escalate one step at a time; after each, snapshot_pane {"paneId": %[2]s} and stop once a prompt shows.
1. snapshot_pane: note the command, the mode and the last lines.
2. In copy mode: exit_copy_mode.
3. send_keys {"paneId": %[2]s, "keys": "C-c", "enter": false}; then try "q", then "Escape" for a pager or full-screen program.
4. Last resort, after asking the user: respawn_pane (ends what runs in the pane).
Report what was stuck and which step freed it.`, a["paneId"], q(a["paneId"]))
}
