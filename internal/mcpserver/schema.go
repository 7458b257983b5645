package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor derives the JSON schema of a tool's input type and trims what
// costs bytes in every conversation without helping a client: nullable
// types become plain ones (an absent field already says "none"), and a
// boolean or number described as "default v" says so with the default
// keyword, which the SDK also applies. It stays closed
// (additionalProperties: false): calls are checked against it, so a
// misspelt argument is an error rather than silently ignored; clients
// are shown it open (advertised). Output schemas are compactOutput's.
func schemaFor[T any]() *jsonschema.Schema {
	s := fullSchema[T]()
	compactInput(s)
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
	if t := plainType(s); t != "" && s.Type == "" {
		s.Type, s.Types = t, nil
	}
}

// plainType is the type s gives a value that is not null: its type, or
// the other of a nullable pair; "" when it gives none or several.
func plainType(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return s.Type
	case len(s.Types) == 2 && s.Types[0] == "null":
		return s.Types[1]
	case len(s.Types) == 2 && s.Types[1] == "null":
		return s.Types[0]
	}
	return ""
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

// outputSchema is an output schema as clients are shown it: an object
// and the names of its fields, with nothing about them, not even their
// types (a client checks a reply against this schema, if at all, and
// tmcp's replies are of fixed Go types); docs/TOOLS.md lists every field,
// nested ones too, with its type and meaning, from the uncompacted schema.
type outputSchema struct {
	Type       string              `json:"type"`
	Properties map[string]struct{} `json:"properties,omitempty"`
}

// compactOutput is the output schema clients are shown for the
// uncompacted schema s of a reply's type.
func compactOutput(s *jsonschema.Schema) *outputSchema {
	out := &outputSchema{Type: plainType(s)}
	for name := range s.Properties {
		if out.Properties == nil {
			out.Properties = map[string]struct{}{}
		}
		out.Properties[name] = struct{}{}
	}
	return out
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
