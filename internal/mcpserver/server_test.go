package mcpserver

import "testing"

func TestTheToolRegistryIsBuiltOnce(t *testing.T) {
	s := &Server{cfg: Config{Tier: Mutating}}
	first, second := s.definitions(), s.definitions()
	if len(first) == 0 || len(first) != len(second) {
		t.Fatalf("%d tools, then %d", len(first), len(second))
	}
	for i := range first {
		if first[i].tool != second[i].tool || first[i].tool.InputSchema != second[i].tool.InputSchema {
			t.Errorf("%s was defined again", first[i].tool.Name)
		}
	}
	// Defining the tools derives every schema, thousands of allocations;
	// listing them once defined is a few.
	s.Tools()
	if allocs := testing.AllocsPerRun(10, func() { s.Tools() }); allocs > 10 {
		t.Errorf("Tools allocates %v times a call; the registry is being rebuilt", allocs)
	}
}
