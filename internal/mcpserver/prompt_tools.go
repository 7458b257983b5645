package mcpserver

import (
	"context"
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
		define(&mcp.Tool{Name: "get_prompt", Annotations: readOnly("Get prompt"),
			Description: "Steps for a task, by prompt name: " + strings.Join(s.promptNames(), ", ") + "."}, s.getPrompt),
	}
}

type getPromptIn struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

type getPromptOut struct {
	Name string `json:"name"`
}

func (s *Server) getPrompt(_ context.Context, _ *mcp.CallToolRequest, in getPromptIn) (*mcp.CallToolResult, getPromptOut, error) {
	for _, r := range s.offeredRecipes() {
		if r.prompt.Name == in.Name {
			text, err := r.text(in.Arguments)
			if err != nil {
				return nil, getPromptOut{}, err
			}
			out := getPromptOut{Name: in.Name}
			return textResult(out, text), out, nil
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
