package mcpserver

import (
	"encoding/json"
	"testing"
)

// maxToolBytes is a tool's share of the wire budget: "at most ~420".
const maxToolBytes = 425

func TestGetPromptIsOfferedOnlyWhenAskedForAndFitsItsShare(t *testing.T) {
	if defs := (&Server{cfg: Config{Tier: Destructive}}).promptTools(); len(defs) != 0 {
		t.Errorf("promptTools without PromptsAsTools: %d tools, want none", len(defs))
	}
	for _, tier := range []Tier{ReadOnly, Mutating, Destructive} {
		defs := (&Server{cfg: Config{Tier: tier, PromptsAsTools: true}}).promptTools()
		if len(defs) != 1 || defs[0].tool.Name != "get_prompt" || defs[0].tier != ReadOnly {
			t.Fatalf("tier %s: promptTools gave %d tools, want get_prompt, read only", tier, len(defs))
		}
		b, _ := json.Marshal(defs[0].tool)
		t.Logf("tier %s: get_prompt is %d bytes on the wire: %s", tier, len(b), b)
		if len(b) > maxToolBytes {
			t.Errorf("tier %s: get_prompt is %d bytes, over its %d share", tier, len(b), maxToolBytes)
		}
	}
}
