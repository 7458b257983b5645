package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool's typed handler on m. The SDK's wrapper
// (mcp.AddTool) still checks the arguments against the input schema,
// applies its defaults and decodes them; the reply is made here, by
// structured, because the wrapper would encode the handler's Out, decode
// that into generic maps, check them against the output schema and encode
// them again: about 8 ms of CPU for a listing of 1,000 panes, to check
// that values of tmcp's own types fit schemas derived from those types.
// Those types fix every field's JSON type, which is all a compact output
// schema says (compactOutput), except that a nil slice, map or pointer is
// null; that alone is checked on each reply. The output schema is
// advertised as before.
func addTool[In, Out any](m *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	schema, _ := t.OutputSchema.(*jsonschema.Schema)
	nonNull := nonNullFields(reflect.TypeFor[Out](), schema)
	// With Out as any and a nil out, the wrapper leaves the result as it
	// is; the output schema set on t is the one it advertises.
	mcp.AddTool(m, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		res, out, err := h(ctx, req, in)
		if err != nil {
			return nil, nil, err
		}
		res, err = structured(res, out, nonNull)
		return res, nil, err
	})
}

// structured returns res with out as its structured content, encoded once,
// and, when the handler gave no content, that same JSON as its one text
// block: what the SDK's wrapper sends. A result that asks the client for
// input carries neither, as with the wrapper. A field that would be null
// where the output schema wants a value is an error of the call, as the
// wrapper's check made it.
func structured[Out any](res *mcp.CallToolResult, out Out, nonNull []schemaField) (*mcp.CallToolResult, error) {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.InputRequests != nil {
		return res, nil
	}
	v := reflect.ValueOf(&out).Elem()
	if v.Kind() == reflect.Pointer && v.IsNil() {
		v = reflect.Zero(v.Type().Elem()) // as the wrapper does: {} rather than null
	}
	for _, f := range nonNull {
		if fv, err := v.FieldByIndexErr(f.index); err == nil && fv.IsNil() {
			return nil, outputError("validating tool output: %s is null, want %s", f.name, f.typ)
		}
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, outputError("marshaling output: %v", err)
	}
	res.StructuredContent = json.RawMessage(b)
	switch {
	case res.Content == nil:
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	case len(b) == 0 || b[0] != '{':
		// For clients that read only content, as the wrapper does.
		res.Content = append(res.Content, &mcp.TextContent{Text: string(b)})
	}
	return res, nil
}

// outputError is a reply that could not be made, sent as the wrapper sends
// it: a JSON-RPC error, not a tool's, with code 0 (the SDK's for an error
// that is not a JSON-RPC one), since the wrapper would pass any other
// error to the client as the tool's.
func outputError(format string, args ...any) error {
	return &jsonrpc.Error{Message: fmt.Sprintf(format, args...)}
}

// schemaField is a field of an output type that the output schema types
// and that can be nil: a slice, map, pointer or interface whose JSON is
// not left out when empty.
type schemaField struct {
	name  string // its JSON name
	typ   string // its type in the schema
	index []int  // as reflect.Value.FieldByIndex takes it
}

// nonNullFields returns the fields of t, a struct or a pointer to one, that
// schema types and that a value of t may hold as null.
func nonNullFields(t reflect.Type, schema *jsonschema.Schema) []schemaField {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || schema == nil {
		return nil
	}
	var out []schemaField
	for _, f := range jsonFields(t) {
		p := schema.Properties[f.name]
		if p == nil || p.Type == "" || p.Type == "null" || slices.Contains(p.Types, "null") || f.omitted {
			continue
		}
		switch f.field.Type.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			out = append(out, schemaField{name: f.name, typ: p.Type, index: f.field.Index})
		}
	}
	return out
}

// jsonField is a field of a struct as encoding/json writes it.
type jsonField struct {
	name    string
	omitted bool // omitempty or omitzero: an empty value is left out
	field   reflect.StructField
}

// jsonFields returns the fields encoding/json writes for struct type t,
// those of embedded structs included, by their JSON names.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		tag, tagged := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" && opts == "" || f.Anonymous && !tagged {
			continue // unexported, left out, or an embedded struct whose fields are listed
		}
		if name == "" {
			name = f.Name
		}
		omitted := false
		for o := range strings.SplitSeq(opts, ",") {
			omitted = omitted || o == "omitempty" || o == "omitzero"
		}
		out = append(out, jsonField{name: name, omitted: omitted, field: f})
	}
	return out
}
