package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor derives the JSON schema of a tool's input or output type and
// trims what costs bytes in every conversation without helping a client:
// nullable types become plain ones (an absent field already says "none");
// in input schemas a boolean described as "default true" or "default
// false" says so with the default keyword, which the SDK also applies;
// output schemas keep only the types of a reply's own fields — no
// descriptions, required lists, closed property sets, nor the fields of
// nested objects and list items, which describe tmcp's replies to itself
// (docs/TOOLS.md lists every field). Input schemas stay closed
// (additionalProperties: false): calls are checked against them, so a
// misspelt argument is an error rather than silently ignored; clients are
// shown them open (advertised).
func schemaFor[T any](output bool) *jsonschema.Schema {
	s := fullSchema[T]()
	if output {
		compactOutput(s)
	} else {
		compactInput(s)
	}
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

// notNull makes a nullable type plain.
func notNull(s *jsonschema.Schema) {
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
}

func compactInput(s *jsonschema.Schema) {
	notNull(s)
	if v, ok := strings.CutPrefix(s.Description, "default "); ok && isDefault(s.Type, v) {
		s.Description, s.Default = "", json.RawMessage(v)
	}
	for _, p := range s.Properties {
		compactInput(p)
	}
	if s.Items != nil {
		compactInput(s.Items)
	}
}

// isDefault reports whether v, from a description "default v", is a
// value of type t that the default keyword can say instead.
func isDefault(t, v string) bool {
	switch t {
	case "boolean":
		return v == "true" || v == "false"
	case "number", "integer":
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	}
	return false
}

// compactOutput keeps the type of s and of each of its properties.
func compactOutput(s *jsonschema.Schema) {
	notNull(s)
	s.Description, s.Required, s.AdditionalProperties = "", nil, nil
	for _, p := range s.Properties {
		notNull(p)
		*p = jsonschema.Schema{Type: p.Type}
	}
}

// advertised is the input schema s as clients are shown it: without
// additionalProperties, 28 bytes of every tool that a model reads in
// every conversation. The server checks each call against s itself, so
// an argument s does not name is refused all the same, with an error
// that names it.
func advertised(s *jsonschema.Schema) *jsonschema.Schema {
	c := s.CloneSchemas()
	var open func(*jsonschema.Schema)
	open = func(s *jsonschema.Schema) {
		s.AdditionalProperties = nil
		for _, p := range s.Properties {
			open(p)
		}
		if s.Items != nil {
			open(s.Items)
		}
	}
	open(c)
	return c
}
