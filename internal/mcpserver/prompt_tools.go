package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// promptTools returns the prompts offered as one tool (TMCP_PROMPTS_AS_TOOLS=1).
func (s *Server) promptTools() []toolDef {
	if !s.cfg.PromptsAsTools {
		return nil
	}
	return []toolDef{
		define(&mcp.Tool{Name: "get_prompt", Title: "Get a prompt", Annotations: readOnly(),
			Description: "Task steps: " + strings.Join(s.promptNames(), ", ") + "."}, s.getPrompt),
	}
}

type getPromptIn struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

// getPromptOut is empty: the prompt's text is the second content block.
type getPromptOut struct{}

func (s *Server) getPrompt(_ context.Context, _ *mcp.CallToolRequest, in getPromptIn) (*mcp.CallToolResult, getPromptOut, error) {
	for _, r := range s.offeredRecipes() {
		if r.prompt.Name == in.Name {
			text, err := r.text(stringArgs(in.Arguments))
			if err != nil {
				return nil, getPromptOut{}, err
			}
			// The prompt is tmcp's own text, not a pane's: no fence.
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}, &mcp.TextContent{Text: text}}}, getPromptOut{}, nil
		}
	}
	return nil, getPromptOut{}, fmt.Errorf("no prompt %q at the %s tier; get_prompt takes one of: %s", in.Name, s.cfg.Tier, strings.Join(s.promptNames(), ", "))
}

// promptNames lists the prompts the tier offers.
func (s *Server) promptNames() []string {
	var names []string
	for _, r := range s.offeredRecipes() {
		names = append(names, r.prompt.Name)
	}
	return names
}

// stringArgs takes prompt arguments as strings, as prompts/get does; a
// number or a boolean a model passed is taken as its JSON text.
func stringArgs(in map[string]any) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		if str, ok := v.(string); ok {
			out[k] = str
			continue
		}
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}
