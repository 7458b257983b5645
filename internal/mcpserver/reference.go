package mcpserver

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Reference returns the tool reference (docs/TOOLS.md) in Markdown, made
// from the same definitions, schemas and annotations that clients get.
func (s *Server) Reference() string {
	var b strings.Builder
	b.WriteString("# tmcp tools\n\n")
	b.WriteString("Generated from the live tool definitions by `go test ./internal/mcpserver -run Reference -update`; do not edit by hand.\n\n")
	b.WriteString("A tool is offered when its tier is at or below `TMCP_SAFETY` (readonly < mutating < destructive).\n\n")
	b.WriteString("What holds for every tool is said once, in the instructions a client is given with the tools (with the default wait ceiling):\n\n> " +
		strings.ReplaceAll(strings.TrimSpace(s.conventions()), "<", "&lt;") + "\n\n")
	b.WriteString("| tool | tier | description |\n| --- | --- | --- |\n")
	defs := s.definitions()
	for _, d := range defs {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s |\n", d.tool.Name, d.tool.Name, d.tier, d.tool.Description)
	}
	for _, d := range defs {
		a := d.tool.Annotations
		fmt.Fprintf(&b, "\n## %s\n\n*%s.* %s\n\n", d.tool.Name, d.tool.Title, d.tool.Description)
		fmt.Fprintf(&b, "Tier: %s. Read-only: %v. Destructive: %v. Idempotent: %v.\n\n", d.tier, a.ReadOnlyHint,
			a.DestructiveHint != nil && *a.DestructiveHint, a.IdempotentHint)
		writeFields(&b, "Arguments", d.tool.InputSchema.(*jsonschema.Schema))
		writeFields(&b, "Result fields", d.result)
	}
	return b.String()
}

// writeFields lists the properties of an object schema, nested objects
// and arrays of objects with dotted names.
func writeFields(b *strings.Builder, title string, s *jsonschema.Schema) {
	var rows []string
	collect(&rows, "", s)
	if len(rows) == 0 {
		fmt.Fprintf(b, "%s: none.\n\n", title)
		return
	}
	fmt.Fprintf(b, "%s:\n\n| name | type | required | description |\n| --- | --- | --- | --- |\n", title)
	for _, r := range rows {
		b.WriteString(r)
	}
	b.WriteString("\n")
}

func collect(rows *[]string, prefix string, s *jsonschema.Schema) {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, n := range names {
		p := s.Properties[n]
		typ := p.Type
		if typ == "" && len(p.Types) > 0 {
			typ = p.Types[len(p.Types)-1]
		}
		if typ == "array" && p.Items != nil {
			typ = p.Items.Type + "[]"
		}
		req := ""
		if required[n] {
			req = "yes"
		}
		desc := p.Description
		if p.Default != nil {
			desc = strings.TrimPrefix(desc+"; default "+string(p.Default), "; ")
		}
		*rows = append(*rows, fmt.Sprintf("| `%s%s` | %s | %s | %s |\n", prefix, n, typ, req, strings.ReplaceAll(desc, "|", `\|`)))
		switch {
		case typ == "object":
			collect(rows, prefix+n+".", p)
		case p.Items != nil && p.Items.Type == "object":
			collect(rows, prefix+n+"[].", p.Items)
		}
	}
}
