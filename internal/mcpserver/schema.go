package mcpserver

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor derives the JSON schema of a tool's input or output type and
// trims what costs bytes in every conversation without helping a client:
// nullable types become plain ones (an absent field already says "none"),
// and output schemas drop their descriptions, required lists and closed
// property sets, which describe tmcp's own replies to itself. Input
// schemas keep additionalProperties: false, so a misspelt argument is an
// error rather than silently ignored.
func schemaFor[T any](output bool) *jsonschema.Schema {
	s := fullSchema[T]()
	compact(s, output)
	return s
}

// fullSchema derives the JSON schema of a tool's type, uncompacted.
func fullSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err)) // tool types are fixed at build time
	}
	return s
}

func compact(s *jsonschema.Schema, output bool) {
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
	if output {
		s.Description, s.Required, s.AdditionalProperties = "", nil, nil
	}
	for _, p := range s.Properties {
		compact(p, output)
	}
	if s.Items != nil {
		compact(s.Items, output)
	}
}
